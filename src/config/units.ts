/**
 * Sizes (`"32KB"`) and Go-style durations (`"1h30m"`) as written in mcphub.yaml.
 *
 * @module
 */

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i;
const SIZE_FORMS =
  'a number of bytes, or a number with B, KB, MB or GB (base 1024), e.g. "32KB", "1MB", "512B" or "0"';

/**
 * Parses a size such as `"32KB"`, `"1.5 MB"` or `"4096"` into bytes. Units are B, KB, MB and GB, base
 * 1024, case-insensitive, with an optional space; a bare number is bytes. Fractions round down.
 *
 * @param text the size as written
 * @throws {RangeError} naming the accepted forms
 */
export function parseSize(text: string): number {
  const match = SIZE_PATTERN.exec(text);
  const multiplier = match ? SIZE_UNITS[match[2].toLowerCase()] : undefined;
  if (!match || multiplier === undefined) {
    throw new RangeError(`Invalid size "${text}": expected ${SIZE_FORMS}`);
  }
  const bytes = Math.floor(Number(match[1]) * multiplier);
  if (!Number.isSafeInteger(bytes)) throw new RangeError(`Invalid size "${text}": too large`);
  return bytes;
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "\u00b5s": 1e-3,
  "\u03bcs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;
const DURATION_FORMS =
  'a Go-style duration such as "500ms", "30s", "5m", "1h30m" (units ns, us, ms, s, m, h)';

/**
 * Parses a Go-style duration (`time.ParseDuration`): a sequence of decimal numbers with units such as
 * `"300ms"`, `"1.5h"` or `"2h45m"`, optionally signed; `"0"` needs no unit.
 *
 * @param text the duration as written
 * @returns milliseconds (fractional below 1 ms)
 * @throws {RangeError} naming the accepted forms
 */
export function parseDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest[0] === "-") sign = -1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") throw new RangeError(`Invalid duration "${text}": expected ${DURATION_FORMS}`);
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < rest.length) {
    const match = DURATION_PART.exec(rest);
    if (!match) throw new RangeError(`Invalid duration "${text}": expected ${DURATION_FORMS}`);
    total += Number(match[1]) * DURATION_UNITS[match[2]];
  }
  if (!Number.isFinite(total)) throw new RangeError(`Invalid duration "${text}": too large`);
  return sign * total;
}
