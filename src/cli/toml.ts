/**
 * A small TOML reader for Codex's `config.toml` (`[mcp_servers.NAME]` tables), and the table spans that
 * `mcphub hosts use codex` edits as text so comments stay. It reads TOML 1.0 tables, dotted and quoted
 * keys, strings (basic, literal, multi-line), numbers, booleans, arrays and inline tables; dates are
 * kept as their text. Arrays of tables (`[[x]]`) are read as arrays.
 *
 * @module
 */

/** A TOML document that cannot be read, with its line (1-based). */
export class TomlError extends SyntaxError {
  override name = "TomlError";
  constructor(message: string, readonly line: number) {
    super(`line ${line}: ${message}`);
  }
}

/** A `[table]` header and the lines it owns (up to the next header). */
export interface TomlTable {
  path: string[];
  /** 0-based line index of the header. */
  headerLine: number;
  /** 0-based index of the first line after the table's content (the next header, or the end). */
  endLine: number;
}

type Table = Record<string, unknown>;

const BARE = /^[A-Za-z0-9_-]+/;

/** Parses TOML text into plain objects, and lists its table headers. */
export function parseToml(text: string): { data: Table; tables: TomlTable[] } {
  const data: Table = {};
  const tables: TomlTable[] = [];
  let at = 0;
  const line = () => text.slice(0, at).split("\n").length;
  const fail = (message: string): never => {
    throw new TomlError(message, line());
  };
  const spaces = () => {
    while (text[at] === " " || text[at] === "\t") at++;
  };
  const blank = () => {
    for (;;) {
      while (at < text.length && /\s/.test(text[at]!)) at++;
      if (text[at] === "#") {
        while (at < text.length && text[at] !== "\n") at++;
      } else return;
    }
  };
  const endOfLine = () => {
    spaces();
    if (text[at] === "#") { while (at < text.length && text[at] !== "\n") at++; }
    if (at < text.length && text[at] !== "\n" && !text.startsWith("\r\n", at)) {
      fail("expected the end of the line");
    }
  };
  const basic = (): string => {
    const multi = text.startsWith('"""', at);
    at += multi ? 3 : 1;
    if (multi && text[at] === "\n") at++;
    let out = "";
    for (;;) {
      if (at >= text.length) fail("unterminated string");
      if (multi ? text.startsWith('"""', at) : text[at] === '"') {
        at += multi ? 3 : 1;
        return out;
      }
      const c = text[at]!;
      if (c === "\n" && !multi) fail("line break inside a string");
      if (c === "\\") {
        const e = text[at + 1]!;
        const simple: Record<string, string> = {
          b: "\b",
          t: "\t",
          n: "\n",
          f: "\f",
          r: "\r",
          '"': '"',
          "\\": "\\",
        };
        if (e in simple) {
          out += simple[e];
          at += 2;
        } else if (e === "u" || e === "U") {
          const size = e === "u" ? 4 : 8;
          const hex = text.slice(at + 2, at + 2 + size);
          if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== size) fail("invalid unicode escape");
          out += String.fromCodePoint(parseInt(hex, 16));
          at += 2 + size;
        } else if (multi && /\s/.test(e)) {
          at++;
          while (/\s/.test(text[at] ?? "")) at++;
        } else fail(`invalid escape "\\${e}"`);
        continue;
      }
      out += c;
      at++;
    }
  };
  const literal = (): string => {
    const multi = text.startsWith("'''", at);
    at += multi ? 3 : 1;
    if (multi && text[at] === "\n") at++;
    const close = multi ? "'''" : "'";
    const end = text.indexOf(close, at);
    if (end === -1 || (!multi && text.slice(at, end).includes("\n"))) fail("unterminated string");
    const out = text.slice(at, end);
    at = end + close.length;
    return out;
  };
  const key = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      spaces();
      if (text[at] === '"') parts.push(basic());
      else if (text[at] === "'") parts.push(literal());
      else {
        const m = BARE.exec(text.slice(at));
        if (!m) fail("expected a key");
        parts.push(m![0]);
        at += m![0].length;
      }
      spaces();
      if (text[at] !== ".") return parts;
      at++;
    }
  };
  const value = (): unknown => {
    const c = text[at];
    if (c === '"') return basic();
    if (c === "'") return literal();
    if (c === "[") {
      at++;
      const items: unknown[] = [];
      for (;;) {
        blank();
        if (text[at] === "]") break;
        items.push(value());
        blank();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] !== "]") fail('expected "," or "]"');
        break;
      }
      at++;
      return items;
    }
    if (c === "{") {
      at++;
      const table: Table = {};
      spaces();
      if (text[at] === "}") return at++, table;
      for (;;) {
        const path = key();
        if (text[at] !== "=") fail('expected "="');
        at++;
        spaces();
        assign(table, path, value());
        spaces();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] !== "}") fail('expected "," or "}"');
        at++;
        return table;
      }
    }
    const m = /^(?:true|false|[0-9TZ:.+\-_eExobaA-Fi n]+)/.exec(text.slice(at).split(/[\n,\]}#]/)[0]!);
    const raw = m?.[0].trim() ?? "";
    if (!raw) fail("expected a value");
    at += text.slice(at).indexOf(raw) + raw.length;
    if (raw === "true" || raw === "false") return raw === "true";
    const number = Number(raw.replaceAll("_", ""));
    return Number.isNaN(number) ? raw : number;
  };
  const assign = (table: Table, path: string[], v: unknown) => {
    let t = table;
    for (const part of path.slice(0, -1)) {
      const next = t[part] ??= {};
      if (typeof next !== "object" || Array.isArray(next)) fail(`"${part}" is not a table`);
      t = next as Table;
    }
    const last = path.at(-1)!;
    if (last in t) fail(`"${path.join(".")}" is defined twice`);
    t[last] = v;
  };
  const open = (path: string[], array: boolean): Table => {
    let t = data;
    for (const [i, part] of path.entries()) {
      const isLast = i === path.length - 1;
      if (isLast && array) {
        const list = (t[part] ??= []) as unknown[];
        if (!Array.isArray(list)) fail(`"${path.join(".")}" is not an array of tables`);
        const entry: Table = {};
        list.push(entry);
        return entry;
      }
      let next = t[part] ??= {};
      if (Array.isArray(next)) next = next.at(-1);
      if (typeof next !== "object" || next === null) fail(`"${part}" is not a table`);
      t = next as Table;
    }
    return t;
  };

  let current = data;
  for (;;) {
    blank();
    if (at >= text.length) break;
    if (text[at] === "[") {
      const array = text[at + 1] === "[";
      const headerLine = line() - 1;
      at += array ? 2 : 1;
      const path = key();
      if (text[at] !== "]" || (array && text[at + 1] !== "]")) fail('expected "]"');
      at += array ? 2 : 1;
      endOfLine();
      const previous = tables.at(-1);
      if (previous) previous.endLine = headerLine;
      tables.push({ path, headerLine, endLine: -1 });
      current = open(path, array);
      continue;
    }
    const path = key();
    if (text[at] !== "=") fail('expected "=" after a key');
    at++;
    spaces();
    assign(current, path, value());
    endOfLine();
  }
  const lines = text.split("\n").length;
  const last = tables.at(-1);
  if (last) last.endLine = lines;
  return { data, tables };
}

/** A TOML value for strings and arrays of strings (what the mcphub entry needs). */
export function tomlValue(value: string | readonly string[]): string {
  return typeof value === "string"
    ? JSON.stringify(value)
    : `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
}
