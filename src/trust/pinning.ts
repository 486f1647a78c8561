/**
 * Tool-definition pinning, the rug-pull defence: the hash of each tool's definition is recorded in the
 * store on first sight; a later, different definition is held (not mounted) until a person approves it
 * with `mcphub approve`. Per server, `trust: changes` (default) holds changed tools, `pin` also holds
 * new ones, `off` checks nothing.
 *
 * @module
 */
import { nodeCrypto } from "../catalog/hashing.ts";
import { canonicalJson } from "../catalog/mod.ts";
import type { DatabaseSync, Migration } from "../store/mod.ts";
import type { ToolDefinition } from "../catalog/mod.ts";
import { parseJson } from "../json/mod.ts";

/** The store migrations of tool pinning. */
export const toolPinMigrations: Migration[] = [{
  id: "tool_pins/1",
  sql: `
    CREATE TABLE tool_pins (
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      hash TEXT,
      definition TEXT,
      pending_hash TEXT,
      pending_definition TEXT,
      changed_at INTEGER,
      first_seen INTEGER NOT NULL,
      approved_at INTEGER,
      PRIMARY KEY (server, tool)
    )`,
}];

/** How a server's tool definitions are checked. */
export type Trust = "changes" | "pin" | "off";

/** The parts of a definition that are pinned, under their MCP names. */
export const PINNED_FIELDS = [
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
] as const;

/** What is hashed: the pinned fields, absent ones as null. */
function pinned(def: ToolDefinition): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of PINNED_FIELDS) out[field] = def[field] ?? null;
  return out;
}

/** SHA-256 (hex) of a definition's pinned fields in canonical JSON. */
export function definitionHash(def: ToolDefinition): string {
  return nodeCrypto().createHash("sha256").update(canonicalJson(pinned(def))).digest("hex");
}

/** A tool that is not mounted until approved. */
export interface HeldTool {
  server: string;
  /** Downstream tool name. */
  tool: string;
  /** `changed`: differs from the approved definition; `new`: never approved (`trust: pin`). */
  status: "changed" | "new";
  /** The pinned fields that differ from the approved definition (all of them for `new`). */
  fields: string[];
  /** When the current held definition was first seen, ms since the epoch. */
  since: number;
}

/** A held definition with what it was before, for `mcphub tools changes`. */
export interface ToolChange extends HeldTool {
  before?: ToolDefinition;
  after: ToolDefinition;
}

/** The outcome of checking one server's tool list. */
export interface PinVerdict {
  mounted: ToolDefinition[];
  held: HeldTool[];
}

/** A `tool_pins` row as the check reads it. @internal */
export interface PinRow {
  tool: string;
  hash: string | null;
  definition: string | null;
  pending_hash: string | null;
  pending_definition: string | null;
  changed_at: number | null;
}

/** A stored definition's JSON, or undefined. @internal */
export function parse(text: string | null): ToolDefinition | undefined {
  if (text === null) return undefined;
  try {
    return parseJson(text) as ToolDefinition;
  } catch {
    return undefined;
  }
}

/** The pinned fields whose canonical JSON differs between two definitions. */
export function changedFields(before: ToolDefinition | undefined, after: ToolDefinition): string[] {
  if (!before) return [...PINNED_FIELDS].filter((f) => after[f] !== undefined);
  return PINNED_FIELDS.filter((f) => canonicalJson(before[f] ?? null) !== canonicalJson(after[f] ?? null));
}

/** One write a check makes: a first sighting, or a new (or cleared) pending definition. @internal */
export type PinWrite =
  & { tool: string; pendingHash: string | null; pendingDefinition: string | null; changedAt: number | null }
  & ({ kind: "insert"; hash: string | null; definition: string | null; at: number } | { kind: "pend" });

/**
 * The pure part of a check: the verdict for `tools` against a server's stored rows, and the writes that
 * record it. Both stores (SQLite here, PostgreSQL in `pg_store.ts`) apply the writes their own way. @internal
 */
export function decidePins(
  rows: ReadonlyMap<string, PinRow>,
  server: string,
  trust: Exclude<Trust, "off">,
  tools: readonly ToolDefinition[],
  now: number,
): { verdict: PinVerdict; writes: PinWrite[] } {
  const mounted: ToolDefinition[] = [];
  const held: HeldTool[] = [];
  const writes: PinWrite[] = [];
  for (const def of tools) {
    const hash = definitionHash(def);
    const row = rows.get(def.name);
    if (!row) {
      if (trust === "changes") {
        writes.push({
          kind: "insert",
          tool: def.name,
          hash,
          definition: JSON.stringify(def),
          pendingHash: null,
          pendingDefinition: null,
          changedAt: null,
          at: now,
        });
        mounted.push(def);
      } else {
        writes.push({
          kind: "insert",
          tool: def.name,
          hash: null,
          definition: null,
          pendingHash: hash,
          pendingDefinition: JSON.stringify(def),
          changedAt: now,
          at: now,
        });
        held.push({
          server,
          tool: def.name,
          status: "new",
          fields: changedFields(undefined, def),
          since: now,
        });
      }
      continue;
    }
    if (row.hash === hash) {
      if (row.pending_hash !== null) {
        writes.push({
          kind: "pend",
          tool: def.name,
          pendingHash: null,
          pendingDefinition: null,
          changedAt: null,
        });
      }
      mounted.push(def);
      continue;
    }
    let since = row.changed_at ?? now;
    if (row.pending_hash !== hash) {
      writes.push({
        kind: "pend",
        tool: def.name,
        pendingHash: hash,
        pendingDefinition: JSON.stringify(def),
        changedAt: now,
      });
      since = now;
    }
    held.push({
      server,
      tool: def.name,
      status: row.hash === null ? "new" : "changed",
      fields: changedFields(parse(row.definition), def),
      since,
    });
  }
  return { verdict: { mounted, held }, writes };
}

/**
 * What the hub needs of a pin store: the check, at once or stepwise, and a refresh for a shared store.
 * Both give the same verdict; the hub takes the stepwise one in slices (see `slices.ts`), so a server
 * listing 100,000 tools does not hold the event loop for the seconds its hashing takes.
 */
export interface PinStore {
  /** Checks a server's listed tools, holding the event loop until done. */
  check(server: string, trust: Trust, tools: readonly ToolDefinition[]): PinVerdict;
  /**
   * The same check as a stepwise build: one step per {@linkcode PIN_CHUNK} tools, its writes included.
   * Both stores have it; without it (a stub) the hub takes {@linkcode PinStore.check}.
   */
  checkSteps?(server: string, trust: Trust, tools: readonly ToolDefinition[]): Generator<void, PinVerdict>;
  /** Re-reads what other processes wrote (approvals); shared stores only. */
  refresh?(): Promise<void>;
}

/**
 * Tools checked in one step of a stepwise check: read, hashed, decided and written (one transaction) at
 * once. About 3 ms of work; the step ends a chunk so no transaction spans a yield.
 */
export const PIN_CHUNK = 128;

/** Runs a stepwise build to its end at once. @internal */
export function runSteps<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * The verdict of a stepwise check, chunk by chunk: `step` decides (and writes) one chunk; the chunks'
 * verdicts are joined in list order, so the result is the one `decidePins` gives for the whole list
 * (each tool's verdict depends only on its own row). @internal
 */
export function* chunkedVerdict(
  tools: readonly ToolDefinition[],
  step: (chunk: readonly ToolDefinition[]) => PinVerdict,
): Generator<void, PinVerdict> {
  const mounted: ToolDefinition[] = [];
  const held: HeldTool[] = [];
  for (let i = 0; i < tools.length; i += PIN_CHUNK) {
    if (i > 0) yield;
    const v = step(tools.slice(i, i + PIN_CHUNK));
    for (const t of v.mounted) mounted.push(t);
    for (const h of v.held) held.push(h);
  }
  return { mounted, held };
}

/** The verdict of `trust: off`: everything mounted, as a (one-step) stepwise build. @internal */
// deno-lint-ignore require-yield
export function* unchecked(tools: readonly ToolDefinition[]): Generator<void, PinVerdict> {
  return { mounted: [...tools], held: [] };
}

/** Up to this many tools, a check reads their rows one by one instead of with one `IN (...)` query. */
const FEW_PINS = 8;

/** The pinned tool definitions of every server, in the store. */
export class ToolPins implements PinStore {
  readonly #db: DatabaseSync;
  readonly #clock: () => number;

  constructor(db: DatabaseSync, clock: () => number = Date.now) {
    this.#db = db;
    this.#clock = clock;
  }

  /** The stored rows of `tools` (few: one query each; more: one `IN (...)` query). */
  #rows(server: string, tools: readonly ToolDefinition[]): Map<string, PinRow> {
    const columns =
      "SELECT tool, hash, definition, pending_hash, pending_definition, changed_at FROM tool_pins";
    if (tools.length <= FEW_PINS) {
      const one = this.#db.prepare(`${columns} WHERE server = ? AND tool = ?`);
      const rows = tools.map((t) => one.get(server, t.name) as unknown as PinRow | undefined);
      return new Map(rows.filter((r) => r !== undefined).map((r) => [r.tool, r]));
    }
    const rows = this.#db.prepare(
      `${columns} WHERE server = ? AND tool IN (${tools.map(() => "?").join(", ")})`,
    )
      .all(server, ...tools.map((t) => t.name)) as unknown as PinRow[];
    return new Map(rows.map((r) => [r.tool, r]));
  }

  /**
   * Checks a server's listed tools against the store: records first sightings, holds changed (and,
   * under `pin`, new) definitions. Definitions reaching here are within the depth and size limits.
   */
  check(server: string, trust: Trust, tools: readonly ToolDefinition[]): PinVerdict {
    return runSteps(this.checkSteps(server, trust, tools));
  }

  /**
   * {@linkcode ToolPins.check} as a stepwise build: each step reads, decides and writes (in its own
   * transaction) {@linkcode PIN_CHUNK} tools, so a large list is checked in slices.
   */
  checkSteps(server: string, trust: Trust, tools: readonly ToolDefinition[]): Generator<void, PinVerdict> {
    if (trust === "off") return unchecked(tools);
    const now = this.#clock();
    return chunkedVerdict(tools, (chunk) => {
      const { verdict, writes } = decidePins(this.#rows(server, chunk), server, trust, chunk, now);
      if (writes.length > 0) this.#write(server, writes);
      return verdict;
    });
  }

  /** Applies a check's writes in one transaction. */
  #write(server: string, writes: readonly PinWrite[]): void {
    const insert = this.#db.prepare(
      `INSERT INTO tool_pins (server, tool, hash, definition, pending_hash, pending_definition, changed_at, first_seen)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const pend = this.#db.prepare(
      "UPDATE tool_pins SET pending_hash = ?, pending_definition = ?, changed_at = ? WHERE server = ? AND tool = ?",
    );
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      for (const w of writes) {
        if (w.kind === "insert") {
          insert.run(
            server,
            w.tool,
            w.hash,
            w.definition,
            w.pendingHash,
            w.pendingDefinition,
            w.changedAt,
            w.at,
          );
        } else {
          pend.run(w.pendingHash, w.pendingDefinition, w.changedAt, server, w.tool);
        }
      }
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * Accepts the held definitions of one tool, one server, or every server (no arguments): they become
   * the pinned ones. Returns the approved tools.
   */
  approve(server?: string, tool?: string): { server: string; tool: string }[] {
    const where = server === undefined
      ? ""
      : tool === undefined
      ? " AND server = ?"
      : " AND server = ? AND tool = ?";
    const params = [server, tool].filter((p) => p !== undefined) as string[];
    const rows = this.#db.prepare(`SELECT server, tool FROM tool_pins WHERE pending_hash IS NOT NULL${where}`)
      .all(...params) as { server: string; tool: string }[];
    this.#db.prepare(
      `UPDATE tool_pins SET hash = pending_hash, definition = pending_definition, pending_hash = NULL,
         pending_definition = NULL, changed_at = NULL, approved_at = ? WHERE pending_hash IS NOT NULL${where}`,
    ).run(this.#clock(), ...params);
    return rows.map((r) => ({ server: r.server, tool: r.tool }));
  }

  /** Every held definition with the approved one it differs from, by server and tool. */
  changes(server?: string): ToolChange[] {
    const rows = this.#db.prepare(
      `SELECT server, tool, definition, pending_definition, hash, changed_at FROM tool_pins
       WHERE pending_hash IS NOT NULL${server === undefined ? "" : " AND server = ?"} ORDER BY server, tool`,
    ).all(...(server === undefined ? [] : [server])) as unknown as ChangeRow[];
    return changesOf(rows);
  }
}

/** A held row as `changes` reads it. @internal */
export interface ChangeRow {
  server: string;
  tool: string;
  definition: string | null;
  pending_definition: string;
  hash: string | null;
  changed_at: number | null;
}

/** Held rows as {@linkcode ToolChange}s (rows whose held definition cannot be read are left out). @internal */
export function changesOf(rows: readonly ChangeRow[]): ToolChange[] {
  const out: ToolChange[] = [];
  for (const r of rows) {
    const after = parse(r.pending_definition);
    if (!after) continue;
    const before = parse(r.definition);
    out.push({
      server: r.server,
      tool: r.tool,
      status: r.hash === null ? "new" : "changed",
      fields: changedFields(before, after),
      since: r.changed_at ?? 0,
      before,
      after,
    });
  }
  return out;
}

/** The command that approves one held tool. */
export function approveCommand(server: string, tool: string): string {
  return `mcphub approve ${server}__${tool}`;
}

/** Why a held tool is not mounted, with when and how to approve it: for call and describe errors. */
export function heldMessage(held: HeldTool): string {
  const name = `${held.server}__${held.tool}`;
  const when = new Date(held.since).toISOString();
  const what = held.status === "new"
    ? `is new and server "${held.server}" has trust: pin, so it is held until approved (first seen ${when})`
    : `changed its definition (${
      held.fields.join(", ") || "definition"
    }) at ${when} since it was approved, ` +
      "so it is held and not mounted";
  return `Tool "${name}" ${what}. A person must review and approve it: \`mcphub tools changes\` shows the ` +
    `difference, \`${approveCommand(held.server, held.tool)}\` accepts it`;
}
