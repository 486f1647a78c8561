/**
 * Rules shared by servers, agents and pins: names, `use_when` hints and pin forms.
 *
 * @module
 */
import { didYouMean } from "./suggest.ts";
import { isScalar, isSeq } from "./yaml_nodes.ts";
import { describe, type Field, isNull, type Reader } from "./reader.ts";

/**
 * `inherit_env: all | [NAMES]`: which of the gateway's variables stdio servers inherit beyond the
 * essentials. Names are checked, never the values (never read here).
 */
export function readInheritEnv(reader: Reader, field: Field): "all" | string[] | undefined {
  if (isScalar(field.node) && field.node.value === "all") return "all";
  if (!isSeq(field.node)) {
    return reader.fail(
      field,
      `expected "all" or a list of environment variable names, got ${describe(field.node)}`,
    );
  }
  const names: string[] = [];
  for (const item of reader.items(field, "a list of environment variable names") ?? []) {
    const name = reader.string(item, { nonEmpty: true });
    if (name === undefined) continue;
    if (name.includes("=")) reader.fail(item, 'environment variable names cannot contain "="');
    else names.push(name);
  }
  return names;
}

/** What server and agent names may look like. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** Longest server or agent name. */
export const MAX_NAME_LENGTH = 48;
/** The server name the gateway keeps for its own tools. */
export const RESERVED_SERVER_NAME = "mcphub";
/** Most `use_when` hints per server (and per tool). */
export const MAX_HINTS = 8;
/** Longest hint, in UTF-8 bytes. */
export const MAX_HINT_BYTES = 256;

/** Why `name` cannot name a server or an agent, or undefined when it can. */
export function nameProblem(name: string, kind: "server" | "agent"): string | undefined {
  if (!NAME_PATTERN.test(name)) {
    return `invalid ${kind} name "${name}"; use letters, digits, "_" and "-", starting with a letter or digit`;
  }
  if (name.length > MAX_NAME_LENGTH) {
    return `${kind} name is ${name.length} characters; the limit is ${MAX_NAME_LENGTH}`;
  }
  if (kind === "agent") return undefined;
  if (name.includes("__")) {
    return `server name must not contain "__" (it separates server and tool in public names)`;
  }
  if (name.toLowerCase() === RESERVED_SERVER_NAME) {
    return `server name "${name}" is reserved for the gateway's own tools; choose another name`;
  }
  return undefined;
}

/** Reads hints: one string or a list of strings, each one line of at most 256 bytes, at most 8. */
export function readHints(reader: Reader, field: Field): string[] | undefined {
  let hints: { field: Field; value: string }[];
  if (isSeq(field.node)) {
    hints = [];
    for (const item of reader.items(field, "a list of hints") ?? []) {
      const value = reader.string(item);
      if (value !== undefined) hints.push({ field: item, value });
    }
  } else if (isScalar(field.node) && typeof field.node.value === "string") {
    hints = [{ field, value: field.node.value }];
  } else {
    return reader.fail(field, `expected a hint (a string) or a list of hints, got ${describe(field.node)}`);
  }
  if (hints.length > MAX_HINTS) {
    reader.fail(field, `at most ${MAX_HINTS} hints are allowed, got ${hints.length}`);
  }
  const result: string[] = [];
  for (const { field: where, value } of hints) {
    const bytes = new TextEncoder().encode(value).length;
    if (value.trim() === "") reader.fail(where, "hint is empty");
    else if (/[\r\n]/.test(value)) {
      reader.fail(where, "hint must be one line; split it into several hints");
    } else if (bytes > MAX_HINT_BYTES) {
      reader.fail(where, `hint is ${bytes} bytes; the limit is ${MAX_HINT_BYTES} bytes (UTF-8)`);
    } else result.push(value);
  }
  return result;
}

/** The configured server a `server`, `server__*` or `server__tool` name refers to, if any. */
function serverOf(name: string, servers: readonly string[]): string | undefined {
  return servers.find((server) => name === server || name.startsWith(`${server}__`));
}

/** `unknown server "x"; …` with a suggestion or the configured names. */
export function unknownServer(name: string, servers: readonly string[]): string {
  const known = servers.length ? `configured servers: ${servers.join(", ")}` : "no servers are configured";
  return `unknown server "${name}"${didYouMean(name, servers) || `; ${known}`}`;
}

/** `server "x" is not in this agent's servers (…)`. */
function outOfScope(server: string, scope: readonly string[]): string {
  const list = scope.length ? scope.join(", ") : "none";
  return `server "${server}" is not in this agent's servers (${list})`;
}

/**
 * Checks the server part of a public name against the configured servers and, when given, the agent's
 * scope. Returns false after reporting.
 */
export function checkServerPart(
  reader: Reader,
  field: Field,
  name: string,
  servers: readonly string[],
  scope?: readonly string[],
): boolean {
  const server = serverOf(name, servers);
  if (server === undefined) {
    reader.fail(field, unknownServer(name.split("__")[0], servers));
    return false;
  }
  if (scope && !scope.includes(server)) {
    reader.fail(field, outOfScope(server, scope));
    return false;
  }
  return true;
}

const PIN_FORMS = 'expected "server", "server__*" or "server__tool"';

/**
 * Reads a pin list. Tool names cannot be checked yet (tools are known only once servers connect), so
 * only the server part is verified.
 */
export function readPins(
  reader: Reader,
  field: Field,
  servers: readonly string[],
  scope?: readonly string[],
): string[] | undefined {
  if (isNull(field.node)) return [];
  const items = reader.items(field, `a list of pins (${PIN_FORMS.slice("expected ".length)})`);
  if (!items) return undefined;
  const pins: string[] = [];
  for (const item of items) {
    const pin = reader.string(item, { nonEmpty: true });
    if (pin === undefined) continue;
    const separator = pin.indexOf("__");
    const tool = separator === -1 ? undefined : pin.slice(separator + 2);
    if (/\s/.test(pin) || tool === "" || (tool !== undefined && tool !== "*" && tool.includes("*"))) {
      reader.fail(item, `${PIN_FORMS}, got "${pin}"`);
      continue;
    }
    if (checkServerPart(reader, item, pin, servers, scope)) pins.push(pin);
  }
  return pins;
}
