/**
 * JSON with comments (JSONC, as VS Code's mcp.json allows) read with the position of every property, and
 * edited by splicing text, so that comments, key order and formatting outside the edit stay as written.
 * Strict JSON files (claude_desktop_config.json, ~/.claude.json, …) are read and edited the same way.
 *
 * @module
 */

/** A parsed value with its span in the text. */
export type JsonNode =
  | { kind: "object"; start: number; end: number; props: JsonProp[] }
  | { kind: "array"; start: number; end: number; items: JsonNode[] }
  | { kind: "value"; start: number; end: number; value: unknown };

/** One `"key": value` of an object. */
export interface JsonProp {
  key: string;
  /** Offset of the key's opening quote. */
  start: number;
  value: JsonNode;
  /** Offset of the comma after the value, or -1 for the last property. */
  comma: number;
}

/** A JSONC document that cannot be read, with its line and column (1-based). */
export class JsoncError extends SyntaxError {
  override name = "JsoncError";
  constructor(message: string, readonly line: number, readonly column: number) {
    super(`${line}:${column}: ${message}`);
  }
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** Parses JSONC (comments and trailing commas allowed) into a node tree. */
export function parseJsonc(text: string): JsonNode {
  let at = 0;
  const fail = (message: string): never => {
    const { line, column } = position(text, at);
    throw new JsoncError(message, line, column);
  };
  const skip = () => {
    for (;;) {
      while (at < text.length && /\s/.test(text[at]!)) at++;
      if (text.startsWith("//", at)) {
        const end = text.indexOf("\n", at);
        at = end === -1 ? text.length : end + 1;
      } else if (text.startsWith("/*", at)) {
        const end = text.indexOf("*/", at + 2);
        if (end === -1) fail("unterminated comment");
        at = end + 2;
      } else return;
    }
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') {
      if (text[at] === "\\") at++;
      if (text[at] === "\n") fail("line break inside a string");
      at++;
    }
    if (at >= text.length) fail("unterminated string");
    at++;
    try {
      return JSON.parse(text.slice(start, at));
    } catch {
      at = start;
      return fail("invalid string escape");
    }
  };
  const value = (): JsonNode => {
    skip();
    const start = at;
    const c = text[at];
    if (c === "{") {
      at++;
      const props: JsonProp[] = [];
      for (;;) {
        skip();
        if (text[at] === "}") break;
        if (text[at] !== '"') fail(`expected a property name in double quotes or "}"`);
        const keyStart = at;
        const key = string();
        skip();
        if (text[at] !== ":") fail(`expected ":" after "${key}"`);
        at++;
        const node = value();
        skip();
        const prop: JsonProp = { key, start: keyStart, value: node, comma: -1 };
        props.push(prop);
        if (text[at] === ",") {
          prop.comma = at;
          at++;
          continue;
        }
        if (text[at] !== "}") fail(`expected "," or "}"`);
        break;
      }
      at++;
      return { kind: "object", start, end: at, props };
    }
    if (c === "[") {
      at++;
      const items: JsonNode[] = [];
      for (;;) {
        skip();
        if (text[at] === "]") break;
        items.push(value());
        skip();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] !== "]") fail(`expected "," or "]"`);
        break;
      }
      at++;
      return { kind: "array", start, end: at, items };
    }
    if (c === '"') {
      return { kind: "value", start, end: (string(), at), value: JSON.parse(text.slice(start, at)) };
    }
    const match = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at));
    if (!match) return fail(at >= text.length ? "unexpected end of file" : `unexpected "${c}"`);
    at += match[0].length;
    return { kind: "value", start, end: at, value: JSON.parse(match[0]) };
  };
  skip();
  if (at >= text.length) return { kind: "object", start: 0, end: 0, props: [] };
  const root = value();
  skip();
  if (at < text.length) fail("unexpected text after the end of the document");
  return root;
}

/** The plain value of a node. */
export function nodeValue(node: JsonNode): unknown {
  if (node.kind === "value") return node.value;
  if (node.kind === "array") return node.items.map(nodeValue);
  const result: Record<string, unknown> = {};
  for (const prop of node.props) result[prop.key] = nodeValue(prop.value);
  return result;
}

/** The node at `path` (object keys), or undefined. */
export function findNode(root: JsonNode, path: readonly string[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const key of path) {
    if (node?.kind !== "object") return undefined;
    node = node.props.findLast((prop) => prop.key === key)?.value;
  }
  return node;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

function indentAt(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))![0];
}

/** The file's indent unit: the first indented line's leading whitespace, else two spaces. */
function indentUnit(text: string): string {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
}

/** JSON text for `value` at indent `base`; arrays of plain values stay on one line, as people write them. */
function format(value: unknown, base: string, unit: string): string {
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null)) {
    return `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return JSON.stringify(value, null, unit).replaceAll("\n", `\n${base}`);
  }
  const entries = Object.entries(value);
  if (!entries.length) return "{}";
  const inner = base + unit;
  return `{\n${
    entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${format(v, inner, unit)}`).join(",\n")
  }\n${base}}`;
}

/**
 * Sets the property at `path` to `value`: replaces its value when it exists, else appends it to its
 * object (creating missing parent objects). Everything else in the text is kept byte for byte.
 */
export function setProperty(text: string, path: readonly string[], value: unknown): string {
  const root = parseJsonc(text);
  const unit = indentUnit(text);
  if (text.trim() === "") {
    let nested: unknown = value;
    for (const key of [...path].reverse()) nested = { [key]: nested };
    return `${format(nested, "", unit)}\n`;
  }
  // The deepest existing object along the path.
  let depth = 0;
  let node: JsonNode = root;
  while (depth < path.length - 1) {
    const next = findNode(node, [path[depth]!]);
    if (next?.kind !== "object") break;
    node = next;
    depth++;
  }
  if (node.kind !== "object") {
    throw new TypeError(`Cannot edit: ${path.slice(0, depth).join(".") || "the top level"} is not an object`);
  }
  let rest: unknown = value;
  for (const key of path.slice(depth + 1).reverse()) rest = { [key]: rest };
  const key = path[depth]!;
  const existing = node.props.findLast((prop) => prop.key === key);
  if (existing && depth === path.length - 1) {
    const base = indentAt(text, existing.start);
    return text.slice(0, existing.value.start) + format(rest, base, unit) + text.slice(existing.value.end);
  }
  if (existing) {
    throw new TypeError(`Cannot edit: ${path.slice(0, depth + 1).join(".")} is not an object`);
  }
  const closeIndent = indentAt(text, node.end - 1);
  const last = node.props.at(-1);
  const base = last ? indentAt(text, last.start) : closeIndent + unit;
  const entry = `${JSON.stringify(key)}: ${format(rest, base, unit)}`;
  if (!last) {
    return `${text.slice(0, node.start + 1)}\n${base}${entry}\n${closeIndent}${text.slice(node.end - 1)}`;
  }
  if (last.comma !== -1) {
    // A trailing comma (JSONC) stays a trailing comma.
    return `${text.slice(0, last.comma + 1)}\n${base}${entry},${text.slice(last.comma + 1)}`;
  }
  return `${text.slice(0, last.value.end)},\n${base}${entry}${text.slice(last.value.end)}`;
}

/** The start of the comment-only lines right above `start` (a property's own comments). */
function commentsAbove(text: string, start: number): number {
  let at = start;
  while (at > 0) {
    const previous = lineStart(text, at - 1);
    if (!/^[ \t]*(\/\/.*|\/\*.*\*\/[ \t]*)\r?\n$/.test(text.slice(previous, at))) break;
    at = previous;
  }
  return at;
}

/** Removes the property at `path` (with its comma and its line when it has one to itself). */
export function removeProperty(text: string, path: readonly string[]): string {
  const root = parseJsonc(text);
  const parent = findNode(root, path.slice(0, -1));
  if (parent?.kind !== "object") return text;
  const index = parent.props.findLastIndex((prop) => prop.key === path.at(-1));
  if (index === -1) return text;
  const prop = parent.props[index]!;
  const ownLine = text.slice(lineStart(text, prop.start), prop.start).trim() === "";
  if (prop.comma !== -1) {
    let end = prop.comma + 1;
    const rest = /^[ \t]*(?:\r?\n)?/.exec(text.slice(end))![0];
    if (ownLine && rest.includes("\n")) end += rest.length;
    const start = ownLine && rest.includes("\n")
      ? commentsAbove(text, lineStart(text, prop.start))
      : prop.start;
    return text.slice(0, start) + text.slice(end);
  }
  const previous = parent.props[index - 1];
  if (previous) return text.slice(0, previous.comma) + text.slice(prop.value.end);
  // The only property: leave the braces empty.
  return text.slice(0, parent.start + 1) + text.slice(parent.end - 1).replace(/^\s*(?=})/, "");
}
