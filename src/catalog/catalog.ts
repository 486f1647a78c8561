/**
 * The catalog: every connected, enabled downstream tool with its public name
 * and the metadata discovery ranks on. Pure: built from server metadata and
 * the tool definitions the servers listed.
 *
 * @module
 */
import { type NameReference, planNamesSteps, splitReference } from "./naming.ts";
import { nearest } from "../config/suggest.ts";
import { parseJson } from "../json/mod.ts";
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
  return parseJson(tool.json) as ToolDefinition;
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

/** The fields of a {@link CatalogTool} read from its definition (parsed from the packed JSON on demand). */
type DefinitionFields = Pick<CatalogTool, "title" | "description" | "inputFields" | "required">;

/** The fields of a {@link CatalogTool} that it keeps: names, server metadata and the packed definition. */
export type EntryFields = Omit<CatalogTool, keyof DefinitionFields | "definition">;

/** The fields a catalog entry reads from its definition. */
function definitionFields(def: ToolDefinition): DefinitionFields {
  const props = def.inputSchema?.properties;
  return {
    title: def.title ?? (typeof def.annotations?.title === "string" ? def.annotations.title : undefined),
    description: def.description ?? "",
    inputFields: props && typeof props === "object" ? Object.keys(props) : [],
    required: Array.isArray(def.inputSchema?.required)
      ? def.inputSchema.required.filter((r) => typeof r === "string")
      : [],
  };
}

/** The `[]` of every entry without hints (one shared array, frozen: entries are never changed). */
const NONE: string[] = Object.freeze([]) as unknown as string[];

/**
 * A catalog entry: it keeps its names, its server's metadata and the packed definition, and reads the
 * rest from the definition when asked (once; the definition itself is parsed anew on every read). In
 * a catalog of 100,000 tools, only the few tools described or mounted one by one are ever parsed on
 * the gateway's thread (the index worker gets them packed), so the catalog is no object graph either.
 */
class CatalogEntry implements CatalogTool {
  readonly namespaced: string;
  readonly server: string;
  readonly tool: string;
  readonly short: string;
  readonly serverDescription?: string;
  readonly tags: string[];
  readonly useWhen: string[];
  readonly toolUseWhen: string[];
  readonly packed: PackedTool;
  #read?: DefinitionFields;

  constructor(fields: EntryFields, read?: DefinitionFields) {
    this.namespaced = fields.namespaced;
    this.server = fields.server;
    this.tool = fields.tool;
    this.short = fields.short;
    this.serverDescription = fields.serverDescription;
    this.tags = fields.tags;
    this.useWhen = fields.useWhen;
    this.toolUseWhen = fields.toolUseWhen;
    this.packed = fields.packed;
    this.#read = read;
  }

  get #fields(): DefinitionFields {
    return this.#read ??= definitionFields(this.definition);
  }
  get title(): string | undefined {
    return this.#fields.title;
  }
  get description(): string {
    return this.#fields.description;
  }
  get inputFields(): string[] {
    return this.#fields.inputFields;
  }
  get required(): string[] {
    return this.#fields.required;
  }
  get definition(): ToolDefinition {
    return unpackTool(this.packed);
  }
}

/** The fields of an entry that cross to the index worker (a class instance's getters would not). */
export function entryFields(tool: CatalogTool): EntryFields {
  return {
    namespaced: tool.namespaced,
    server: tool.server,
    tool: tool.tool,
    short: tool.short,
    serverDescription: tool.serverDescription,
    tags: tool.tags,
    useWhen: tool.useWhen,
    toolUseWhen: tool.toolUseWhen,
    packed: tool.packed,
  };
}

/**
 * The entry {@link entryFields} describe (after a structured clone): a plain object again, with its
 * definition parsed once and every field read from it (the index worker reads them for every tool); the
 * JSON text is not kept beside the parsed definition (`packed` packs it again if ever read).
 */
export function reviveEntry(fields: EntryFields): CatalogTool {
  const definition = unpackTool(fields.packed);
  const { packed: _, ...rest } = fields;
  return {
    ...rest,
    ...definitionFields(definition),
    definition,
    get packed() {
      return packTool(definition);
    },
  };
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
    const tags = server.tags ?? NONE;
    const useWhen = server.useWhen ?? NONE;
    const listed: readonly (ToolDefinition | PackedTool)[] = server.tools;
    const byName = new Map(listed.map((t) => [t.name, t]));
    const plans = server.namespace === false
      ? [...byName.keys()].sort().map((name) => ({ downstream: name, short: name, namespaced: name }))
      : yield* planNamesSteps(server.name, [...byName.keys()]);
    work += plans.length;
    for (const plan of plans) {
      if (++work % STEP === 0) yield;
      const given = byName.get(plan.downstream)!;
      const listedAsIs = !(given instanceof PackedTool);
      out.push(
        new CatalogEntry(
          {
            namespaced: plan.namespaced,
            server: server.name,
            tool: plan.downstream,
            short: plan.short,
            serverDescription: server.description,
            tags,
            useWhen,
            toolUseWhen: server.toolUseWhen?.[plan.downstream] ?? NONE,
            packed: listedAsIs ? packTool(given) : given,
          },
          // A definition at hand is read now (no parse later); a packed one when first asked.
          listedAsIs ? definitionFields(given) : undefined,
        ),
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
