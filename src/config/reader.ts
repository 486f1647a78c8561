/**
 * Typed, position-aware reading of a parsed YAML document. Every check reports a problem at the
 * offending key or value and returns undefined, so validation goes on and collects all problems.
 *
 * @module
 */
import type { Document, Node } from "yaml";
import { isAlias, isMap, isScalar, isSeq } from "./yaml_nodes.ts";
import type { ConfigProblem } from "./errors.ts";
import { didYouMean } from "./suggest.ts";

/** A value in the document, with its key path and where it sits. */
export interface Field {
  /** e.g. `servers.github.args[0]`; empty for the document root. */
  path: string;
  /** The key, for problems about the key itself; absent for list items and the root. */
  key?: Node;
  /** The value with aliases resolved; null when there is none. */
  node: Node | null;
}

/** What a node is, for "got …" in messages; never shows a value. */
export function describe(node: Node | null): string {
  if (node === null) return "nothing";
  if (isMap(node)) return "a mapping";
  if (isSeq(node)) return "a list";
  if (isScalar(node)) {
    const value = node.value;
    if (value === null) return "nothing (null)";
    if (typeof value === "boolean") return "a boolean";
    if (typeof value === "number" || typeof value === "bigint") return "a number";
    if (typeof value === "string") return "a string";
  }
  return "an unsupported value";
}

/** True for a node without a value: `key:` with nothing after it, `~` or `null`. */
export function isNull(node: Node | null): boolean {
  return node === null || (isScalar(node) && node.value === null);
}

/** Joins a key onto a path. */
export function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** A parsed document as the reader needs it: `yaml`'s `Document`, or `readBlockYaml`'s (block_yaml.ts). */
export interface ParsedDocument {
  contents: unknown;
}

/** Line and column (1-based) of an offset: `yaml`'s `LineCounter`, or `linePositions` (block_yaml.ts). */
export interface LinePositions {
  linePos(offset: number): { line: number; col: number };
}

/** Reads fields out of one parsed document and collects problems. */
export class Reader {
  readonly problems: ConfigProblem[] = [];
  #doc: ParsedDocument;
  #lines: LinePositions;

  constructor(doc: ParsedDocument, lines: LinePositions) {
    this.#doc = doc;
    this.#lines = lines;
  }

  /** The root field. */
  root(): Field {
    return { path: "", node: this.#resolve(this.#doc.contents as Node | null) };
  }

  /** Records a problem at `where` (a node, or a field's value or key). */
  report(where: Node | Field | null | undefined, path: string | undefined, detail: string): void {
    const node = where && "path" in where ? this.#anchor(where) : where as Node | null | undefined;
    const problem: ConfigProblem = { detail };
    if (path) problem.keyPath = path;
    const offset = node?.range?.[0];
    if (offset !== undefined) {
      const { line, col } = this.#lines.linePos(offset);
      problem.line = Math.max(line, 1);
      problem.column = col;
    }
    this.problems.push(problem);
  }

  /** Records a problem about a field's value (or its key when the value is empty). */
  fail(field: Field, detail: string): undefined {
    this.report(field, field.path, detail);
    return undefined;
  }

  /** Records a problem about a field's key. */
  failKey(field: Field, detail: string): undefined {
    this.report(field.key ?? field.node, field.path, detail);
    return undefined;
  }

  /**
   * The entries of a mapping, in order. Null counts as empty when `allowNull`. Unknown keys (when `known`
   * is given), duplicate and non-scalar keys are reported and skipped.
   */
  entries(field: Field, what: string, options: { known?: readonly string[]; allowNull?: boolean } = {}):
    | Field[]
    | undefined {
    if (options.allowNull && isNull(field.node)) return [];
    if (!isMap(field.node)) return this.fail(field, `expected ${what}, got ${describe(field.node)}`);
    const result: Field[] = [];
    const seen = new Map<string, Node>();
    for (const pair of field.node.items) {
      const keyNode = pair.key as Node | null;
      const keyValue = isScalar(keyNode) ? keyNode.value : undefined;
      if (keyValue === null || keyValue === undefined || typeof keyValue === "object") {
        this.report(keyNode ?? field.node, field.path, "expected a plain key");
        continue;
      }
      const key = String(keyValue);
      const path = child(field.path, key);
      const entry: Field = { path, key: keyNode!, node: this.#resolve(pair.value as Node | null) };
      const earlier = seen.get(key);
      if (earlier) {
        const line = this.#lines.linePos(earlier.range?.[0] ?? 0).line;
        this.failKey(entry, `duplicate key; "${key}" is already set on line ${line}`);
        continue;
      }
      seen.set(key, keyNode!);
      if (options.known && !options.known.includes(key)) {
        const hint = didYouMean(key, options.known) || `; valid keys: ${options.known.join(", ")}`;
        this.failKey(entry, `unknown key${hint}`);
        continue;
      }
      result.push(entry);
    }
    return result;
  }

  /** The items of a list, in order. */
  items(field: Field, what: string): Field[] | undefined {
    if (!isSeq(field.node)) return this.fail(field, `expected ${what}, got ${describe(field.node)}`);
    return field.node.items.map((item, index) => ({
      path: `${field.path}[${index}]`,
      node: this.#resolve(item as Node | null),
    }));
  }

  /** A string value; `nonEmpty` rejects "". */
  string(field: Field, options: { nonEmpty?: boolean } = {}): string | undefined {
    const value = isScalar(field.node) ? field.node.value : undefined;
    if (typeof value !== "string") return this.fail(field, `expected a string, got ${describe(field.node)}`);
    if (options.nonEmpty && value === "") return this.fail(field, "must not be empty");
    return value;
  }

  /** A string, number or boolean as text: numbers keep their spelling (`0800` stays `0800`). */
  text(field: Field): string | undefined {
    const node = field.node;
    if (isScalar(node)) {
      if (typeof node.value === "string") return node.value;
      if (
        typeof node.value === "number" || typeof node.value === "boolean" || typeof node.value === "bigint"
      ) {
        return node.source ?? String(node.value);
      }
    }
    return this.fail(field, `expected a string, number or boolean, got ${describe(node)}`);
  }

  /** A boolean value. */
  boolean(field: Field): boolean | undefined {
    const value = isScalar(field.node) ? field.node.value : undefined;
    if (typeof value === "boolean") return value;
    return this.fail(field, `expected true or false, got ${describe(field.node)}`);
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(field: Field, values: readonly T[]): T | undefined {
    const value = isScalar(field.node) ? field.node.value : undefined;
    if (typeof value === "string" && (values as readonly string[]).includes(value)) return value as T;
    const expected = values.length === 2
      ? `"${values[0]}" or "${values[1]}"`
      : `one of ${values.map((v) => `"${v}"`).join(", ")}`;
    const got = typeof value === "string" ? `"${value}"${didYouMean(value, values)}` : describe(field.node);
    return this.fail(field, `expected ${expected}, got ${got}`);
  }

  /** A list of strings; items that are not strings are reported and skipped. */
  stringList(field: Field, what: string, options: { nonEmpty?: boolean } = {}): string[] | undefined {
    const items = this.items(field, what);
    if (!items) return undefined;
    const result: string[] = [];
    for (const item of items) {
      const value = this.string(item, options);
      if (value !== undefined) result.push(value);
    }
    return result;
  }

  /** Points at the value, or at the key when the value is empty or missing. */
  #anchor(field: Field): Node | undefined {
    const node = field.node;
    const empty = node === null || !node.range ||
      (isScalar(node) && node.value === null && node.range[0] === node.range[1]);
    return (empty ? field.key ?? node : node) ?? undefined;
  }

  #resolve(node: Node | null | undefined): Node | null {
    if (node === undefined || node === null) return null;
    // Only `yaml`'s documents have aliases.
    if (isAlias(node)) return node.resolve(this.#doc as Document) ?? null;
    return node;
  }
}
