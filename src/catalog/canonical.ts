/**
 * Canonical JSON: what the catalog revision and tool pins hash, so that equal content hashes equally.
 *
 * @module
 */

/** Deepest nesting {@link canonicalJson} follows (tool definitions are limited to 64 levels before this). */
export const CANONICAL_MAX_DEPTH = 256;

/**
 * JSON with object keys sorted at every level, so equal content hashes equally.
 *
 * @throws {RangeError} past {@link CANONICAL_MAX_DEPTH} levels (never a stack overflow)
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === null || typeof value !== "object") {
    const json = JSON.stringify(value);
    return json === undefined ? "null" : json;
  }
  if (depth >= CANONICAL_MAX_DEPTH) {
    throw new RangeError(`value nests deeper than ${CANONICAL_MAX_DEPTH} levels`);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k], depth + 1)}`).join(",")}}`;
}
