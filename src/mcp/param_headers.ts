/**
 * `Mcp-Param-{Name}` headers (MCP 2026-07-28, Streamable HTTP, "Custom Headers from Tool Parameters"):
 * a tool's `inputSchema` may mark a property with `x-mcp-header: NAME`; a client calling that tool over
 * HTTP mirrors the argument's value into `Mcp-Param-NAME` (strings as is, integers in decimal, booleans
 * `true`/`false`; a value that is not plain visible ASCII, or looks like the sentinel, as
 * `=?base64?…?=`), and a server that reads the body rejects a call whose header is missing or disagrees
 * with the body (`-32020`, HTTP 400). A declaration is valid only as a non-empty RFC 9110 token, unique
 * without regard to case, on a `string`, `integer` or `boolean` property reached from the root through
 * `properties` alone; a client drops a tool with an invalid one from `tools/list`. As the v2 SDK
 * (2.4.0) does it: a `number` property's declaration makes the tool invalid, but a server still checks
 * its header.
 *
 * @module
 */

/** One `x-mcp-header` declaration: the property's path from the schema root, the header's name part. */
export interface ParamDeclaration {
  path: readonly string[];
  header: string;
  type: string;
}

/** A tool's declarations, or why its schema is invalid (with the declarations a server still checks). */
export type ParamScan =
  | { valid: true; declarations: ParamDeclaration[] }
  | { valid: false; reason: string; declarations?: ParamDeclaration[] };

const KEY = "x-mcp-header";
const PREFIX = "Mcp-Param-";
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TYPES = new Set(["string", "integer", "boolean"]);
/** Keywords whose subschemas are not reached through `properties` alone (a declaration there is invalid). */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
];
/** Of those, the ones whose value maps names to subschemas. */
const BY_NAME = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"]);
const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

const pathName = (path: readonly string[]) => path.length === 0 ? "<root>" : path.join(".");

/** The `x-mcp-header` declarations of a tool's `inputSchema` (see the module documentation). */
export function scanParamHeaders(inputSchema: unknown): ParamScan {
  const declarations: ParamDeclaration[] = [];
  const seen = new Map<string, string>();
  let numberFault: string | undefined;
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (node === null || typeof node !== "object") return undefined;
    const schema = node as Record<string, unknown>;
    if (Object.hasOwn(schema, KEY)) {
      if (!reachable || path.length === 0) {
        return `${pathName(path)}: ${KEY} is only permitted on properties reached from the root through ` +
          `'properties' alone`;
      }
      const raw = schema[KEY];
      if (typeof raw !== "string" || raw.length === 0) {
        return `${pathName(path)}: ${KEY} must be a non-empty string`;
      }
      if (!TOKEN.test(raw)) return `${pathName(path)}: ${KEY} '${raw}' is not an RFC 9110 token`;
      const type = typeof schema.type === "string" ? schema.type : undefined;
      if (type === undefined || !TYPES.has(type)) {
        const fault =
          `${pathName(path)}: ${KEY} is only permitted on string, integer or boolean properties; ` +
          `got ${type ?? "<none>"}`;
        if (type !== "number") return fault;
        numberFault ??= fault;
      }
      const prior = seen.get(raw.toLowerCase());
      if (prior !== undefined) {
        return `${KEY} '${raw}' is not unique without regard to case (also '${prior}')`;
      }
      seen.set(raw.toLowerCase(), raw);
      declarations.push({ path, header: raw, type: type! });
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === "object") {
      for (const [key, child] of Object.entries(properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault !== undefined) return fault;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = schema[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : sub !== null && typeof sub === "object" && BY_NAME.has(keyword)
        ? Object.values(sub)
        : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };
  const fault = visit(inputSchema, [], true);
  if (fault !== undefined) return { valid: false, reason: numberFault ?? fault };
  return numberFault === undefined
    ? { valid: true, declarations }
    : { valid: false, reason: numberFault, declarations };
}

/** A primitive argument as the header carries it; undefined for what no header carries. */
function primitive(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** An HTTP field value for `value`: as is when plain visible ASCII, else the revision's base64 form. */
export function headerValue(value: string): string {
  let plain = value.length > 0 && value === value.trim() &&
    !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX));
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i);
    plain = c === 9 || (c >= 32 && c <= 126);
  }
  if (plain) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${SENTINEL_PREFIX}${btoa(binary)}${SENTINEL_SUFFIX}`;
}

/**
 * A header value as sent (the sentinel's base64 decoded); undefined when the sentinel's payload is not
 * canonical base64 of UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))) return value;
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(b64)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
}

/** The `Mcp-Param-*` headers of one `tools/call` (an absent or null value has none). */
export function paramHeaders(
  declarations: readonly ParamDeclaration[],
  args: unknown,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const declaration of declarations) {
    const value = primitive(valueAt(args, declaration.path));
    if (value !== undefined) out[`${PREFIX}${declaration.header}`] = headerValue(value);
  }
  return out;
}

/**
 * Why a `tools/call`'s `Mcp-Param-*` headers disagree with its arguments (a value in the body without
 * its header, a header that is not valid base64, or decodes to another value; integers compared as
 * numbers), or undefined when they agree. A header for an absent or null value is ignored.
 */
export function paramHeaderMismatch(
  declarations: readonly ParamDeclaration[],
  args: unknown,
  headers: Headers,
): string | undefined {
  for (const declaration of declarations) {
    const name = `${PREFIX}${declaration.header}`;
    const raw = valueAt(args, declaration.path);
    const body = primitive(raw);
    if (body === undefined) continue;
    const header = headers.get(name);
    const where = `${pathName(declaration.path)}=${JSON.stringify(raw)}`;
    if (header === null) return `the body carries ${where} but the ${name} header is absent`;
    const decoded = decodeHeaderValue(header);
    if (decoded === undefined) return `the ${name} header carries an invalid base64 value`;
    const numeric = (declaration.type === "integer" || declaration.type === "number") &&
      DECIMAL.test(decoded) && typeof raw === "number";
    if (numeric ? Number(decoded) !== raw : decoded !== body) {
      return `the ${name} header decodes to ${
        JSON.stringify(decoded.slice(0, 200))
      } but the body carries ${where}`;
    }
  }
  return undefined;
}
