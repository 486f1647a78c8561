/**
 * Size and duration settings: `response_budget`, `tool_schema_budget`, `connect_timeout`, `call_timeout`.
 *
 * @module
 */
import { isScalar } from "./yaml_nodes.ts";
import { describe, type Field, type Reader } from "./reader.ts";
import { parseDuration, parseSize } from "./units.ts";

/** The smallest non-zero `response_budget`: a retrieval receipt must fit in it. */
export const MIN_RESPONSE_BUDGET = 512;

/** A size: a string such as `"32KB"` or a whole number of bytes; at least 0. */
export function readSize(reader: Reader, field: Field): number | undefined {
  const value = isScalar(field.node) ? field.node.value : undefined;
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    return reader.fail(
      field,
      'expected a whole number of bytes or a size such as "32KB", got a negative or fractional number',
    );
  }
  if (typeof value !== "string") {
    return reader.fail(
      field,
      `expected a size such as "32KB", "1MB" or a number of bytes, got ${describe(field.node)}`,
    );
  }
  try {
    return parseSize(value);
  } catch (error) {
    return reader.fail(field, lowerFirst((error as Error).message));
  }
}

/** `response_budget`: a size that is 0 (unlimited) or at least 512 bytes. */
export function readResponseBudget(reader: Reader, field: Field): number | undefined {
  const bytes = readSize(reader, field);
  if (bytes === undefined || bytes === 0 || bytes >= MIN_RESPONSE_BUDGET) return bytes;
  return reader.fail(
    field,
    `${bytes} B is below the minimum of ${MIN_RESPONSE_BUDGET} B, the smallest budget a retrieval receipt fits in; ` +
      `use at least "${MIN_RESPONSE_BUDGET}B", or "0" for unlimited`,
  );
}

/** A positive Go-style duration such as `"30s"`; returns whole milliseconds (rounded up). */
export function readTimeout(
  reader: Reader,
  field: Field,
  options: { allowZero?: boolean } = {},
): number | undefined {
  const value = isScalar(field.node) ? field.node.value : undefined;
  if (typeof value !== "string") {
    return reader.fail(
      field,
      `expected a duration such as "30s", "5m" or "1h30m", got ${describe(field.node)}`,
    );
  }
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    return reader.fail(field, lowerFirst((error as Error).message));
  }
  if (options.allowZero && ms === 0) return 0;
  if (ms <= 0) return reader.fail(field, `must be greater than 0, got "${value}"`);
  return Math.ceil(ms);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** The smallest `expose_budget`: below it not even the meta-tools' definitions fit. */
export const MIN_EXPOSE_BUDGET_TOKENS = 1_000;

/** `expose_budget`: tokens (a whole number, or `"20k"`) of tool definitions `expose: auto` mounts whole. */
export function readExposeBudget(reader: Reader, field: Field): number | undefined {
  const value = isScalar(field.node) ? field.node.value : undefined;
  const text = typeof value === "number"
    ? String(value)
    : typeof value === "string"
    ? value.trim()
    : undefined;
  const match = text === undefined ? null : /^(\d+)(k?)$/i.exec(text);
  if (!match) {
    return reader.fail(
      field,
      `expected a number of tokens such as 20000 or "20k", got ${
        typeof value === "string" ? JSON.stringify(value) : describe(field.node)
      }`,
    );
  }
  const tokens = Number(match[1]) * (match[2] ? 1000 : 1);
  if (!Number.isSafeInteger(tokens) || tokens < MIN_EXPOSE_BUDGET_TOKENS) {
    return reader.fail(
      field,
      `${tokens} tokens is below the minimum of ${MIN_EXPOSE_BUDGET_TOKENS}, where the meta-tools alone no longer fit; ` +
        "use at least 1000, or expose: lazy to mount only pinned tools",
    );
  }
  return tokens;
}
