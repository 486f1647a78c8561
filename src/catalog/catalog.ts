/**
 * The catalog: every connected, enabled downstream tool with its public name
 * and the metadata discovery ranks on. Pure: built from server metadata and
 * the tool definitions the servers listed.
 *
 * @module
 */
import { type NameReference, planNamesSteps, splitReference } from "./naming.ts";
import { nearest } from "../config/suggest.ts";
import { drain, sortSteps, STEP } from "./_steps.ts";

/** A downstream tool definition as MCP `tools/list` returns it (the fields we read). */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: {
    type?: string;
    properties?: Record<string, unknown>;
    required?: string[];
    [k: string]: unknown;
  };
  annotations?: { title?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * A tool definition kept as its JSON text (`JSON.stringify` of the definition as listed): one string
 * for the garbage collector to mark instead of an object graph of a dozen objects. The gateway keeps
 * every listed tool this way (100,000 tools: about 70 MB of strings instead of 130 MB of objects, and
 * a full collection of the heap that holds them ~5 times shorter); {@link unpackTool} parses one when
 * its fields are needed.
 */
export class PackedTool {
  /** The definition's `name`. */
  readonly name: string;
  /** The definition as JSON. */
  readonly json: string;

  constructor(name: string, json: string) {
    this.name = name;
    this.json = json;
  }
}

/** A definition packed (see {@link PackedTool}); its JSON is exactly `JSON.stringify(def)`. */
export function packTool(def: ToolDefinition): PackedTool {
  return new PackedTool(def.name, JSON.stringify(def));
}

/** The definition a {@link PackedTool} holds, parsed anew (the caller may keep or change it). */
export function unpackTool(tool: PackedTool | { readonly json: string }): ToolDefinition {
  return JSON.parse(tool.json);
}

/** One server's metadata and tools, as the catalog is built from it. */
export interface CatalogServer {
  name: string;
  description?: string;
  tags?: string[];
  useWhen?: string[];
  /** Downstream tool name -> hints. */
  toolUseWhen?: Record<string, string[]>;
  /** false: tools are published under their downstream names (no `server__` prefix). */
  namespace?: false;
  tools: ToolDefinition[];
}

/** A {@link CatalogServer} whose tools are packed (the hub's own form). */
export type PackedCatalogServer = Omit<CatalogServer, "tools"> & { tools: readonly PackedTool[] };

/** One tool in the catalog. */
export interface CatalogTool {
  /** Public `server__tool` name. */
  namespaced: string;
  server: string;
  /** Downstream wire name. */
  tool: string;
  /** The public tool part after `server__` (self-prefix stripped). */
  short: string;
  /** `title`, else `annotations.title`. */
  title?: string;
  description: string;
  /** Top-level input property names, in schema order. */
  inputFields: string[];
  required: string[];
  serverDescription?: string;
  tags: string[];
  /** The server's `use_when` hints. */
  useWhen: string[];
  /** `tool_use_when` hints for this tool. */
  toolUseWhen: string[];
  /** The downstream definition, unchanged (parsed anew from {@link CatalogTool.packed} on each read). */
  readonly definition: ToolDefinition;
  /** The downstream definition, packed: what the catalog keeps. */
  readonly packed: PackedTool;
}

/** The fields of a {@link CatalogTool} other than its definition. */
type EntryFields = Omit<CatalogTool, "definition">;

/**
 * A catalog entry: its definition kept packed, parsed on demand (describe_tool, mounting, the resolver),
 * so a catalog of 100,000 tools keeps no definition objects alive.
 */
class CatalogEntry implements CatalogTool {
  namespaced!: string;
  server!: string;
  tool!: string;
  short!: string;
  title?: string;
  description!: string;
  inputFields!: string[];
  required!: string[];
  serverDescription?: string;
  tags!: string[];
  useWhen!: string[];
  toolUseWhen!: string[];
  readonly packed!: PackedTool;

  constructor(fields: EntryFields) {
    Object.assign(this, fields);
  }

  get definition(): ToolDefinition {
    return unpackTool(this.packed);
  }
}

/**
 * A catalog entry as it crossed a thread (structured clone keeps its fields, not its class): the same
 * entry again, with its definition parsed once and kept (the index worker reads it for every tool).
 */
export function reviveEntry(fields: EntryFields): CatalogTool {
  const packed = new PackedTool(fields.packed.name, fields.packed.json);
  return { ...fields, packed, definition: unpackTool(packed) };
}

/** Builds catalog entries for servers, sorted by public name. */
export function buildCatalog(servers: readonly (CatalogServer | PackedCatalogServer)[]): CatalogTool[] {
  return drain(catalogSteps(servers));
}

/**
 * {@link buildCatalog} step by step: it yields between servers and every few hundred tools, so the
 * hub can build a catalog of 100,000 tools in slices without holding the event loop.
 */
export function* catalogSteps(
  servers: readonly (CatalogServer | PackedCatalogServer)[],
): Generator<void, CatalogTool[]> {
  const out: CatalogTool[] = [];
  let work = 0;
  for (const server of servers) {
    const listed: readonly (ToolDefinition | PackedTool)[] = server.tools;
    const byName = new Map(listed.map((t) => [t.name, t]));
    const plans = server.namespace === false
      ? [...byName.keys()].sort().map((name) => ({ downstream: name, short: name, namespaced: name }))
      : yield* planNamesSteps(server.name, [...byName.keys()]);
    work += plans.length;
    for (const plan of plans) {
      if (++work % STEP === 0) yield;
      const given = byName.get(plan.downstream)!;
      const packed = given instanceof PackedTool ? given : packTool(given);
      const def = given instanceof PackedTool ? unpackTool(given) : given;
      const props = def.inputSchema?.properties;
      out.push(
        new CatalogEntry({
          namespaced: plan.namespaced,
          server: server.name,
          tool: plan.downstream,
          short: plan.short,
          title: def.title ??
            (typeof def.annotations?.title === "string" ? def.annotations.title : undefined),
          description: def.description ?? "",
          inputFields: props && typeof props === "object" ? Object.keys(props) : [],
          required: Array.isArray(def.inputSchema?.required)
            ? def.inputSchema.required.filter((r) => typeof r === "string")
            : [],
          serverDescription: server.description,
          tags: server.tags ?? [],
          useWhen: server.useWhen ?? [],
          toolUseWhen: server.toolUseWhen?.[plan.downstream] ?? [],
          packed,
        }),
      );
    }
    yield;
  }
  return yield* sortSteps(
    out,
    (a, b) => (a.namespaced < b.namespaced ? -1 : a.namespaced > b.namespaced ? 1 : 0),
  );
}

/** Name lookup over catalog entries: public names, stutter forms, fragments and downstream names. */
export class CatalogIndex {
  #byPublic = new Map<string, CatalogTool>();
  #byServer = new Map<string, Map<string, CatalogTool>>();

  constructor(tools: readonly CatalogTool[]) {
    drain(this.#fill(tools));
  }

  /** The index of `tools`, built step by step (see {@link catalogSteps}). */
  static *build(tools: readonly CatalogTool[]): Generator<void, CatalogIndex> {
    const index = new CatalogIndex([]);
    yield* index.#fill(tools);
    return index;
  }

  *#fill(tools: readonly CatalogTool[]): Generator<void, void> {
    for (let i = 0; i < tools.length; i++) {
      if (i % STEP === STEP - 1) yield;
      const t = tools[i]!;
      this.#byPublic.set(t.namespaced, t);
      let names = this.#byServer.get(t.server);
      if (!names) this.#byServer.set(t.server, names = new Map());
      // Public short names win over downstream names of other tools.
      if (!names.has(t.tool)) names.set(t.tool, t);
    }
    for (let i = 0; i < tools.length; i++) {
      if (i % STEP === STEP - 1) yield;
      const t = tools[i]!;
      this.#byServer.get(t.server)!.set(t.short, t);
    }
  }

  /** The tool a caller means, or undefined. */
  find(ref: NameReference): CatalogTool | undefined {
    if (!ref.server) {
      const exact = this.#byPublic.get(ref.tool);
      if (exact) return exact;
    }
    const split = splitReference(ref);
    if (!split.server) return undefined;
    const names = this.#byServer.get(split.server);
    if (!names) return undefined;
    return names.get(split.tool) ?? this.#byPublic.get(`${split.server}__${split.tool}`);
  }

  /** Public names closest to what the caller sent, for an error message. */
  closest(name: string, limit = 3): string[] {
    // Banded and length-capped (see nearest): a 3,000-character name costs no more than a short one.
    return nearest(name, this.#byPublic.keys(), limit);
  }
}

/** Levenshtein distance, O(n*m) with two rows. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
