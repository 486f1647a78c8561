/**
 * Tool pins and the tool-list cache on the shared PostgreSQL store. The hub asks both without waiting on
 * the network (a tools/list must not), so each keeps a snapshot in memory, loaded before the servers
 * start ({@linkcode PgToolPins.load}, {@linkcode PgToolCache.preload}: the hub reads the cached lists once
 * that has settled) and refreshed while tools are held, and writes through in the background. A definition approved once is approved for every replica: each replica re-reads the pins
 * of its held tools every 2 s.
 *
 * @module
 */
import type { PgMigration, PgStore } from "../store/mod.ts";
import type { ToolDefinition } from "../catalog/mod.ts";
import {
  type ChangeRow,
  changesOf,
  chunkedVerdict,
  decidePins,
  type PinRow,
  type PinStore,
  type PinVerdict,
  type PinWrite,
  runSteps,
  type ToolChange,
  type Trust,
  unchecked,
} from "./pinning.ts";
import {
  joinedPartsSteps,
  listHash,
  type StoredEra,
  storedEra,
  TOOL_CACHE_PART_CHARS,
  TOOL_CACHE_READ_SLICE_MS,
  type ToolListCache,
  toolPartsSteps,
} from "../catalog/tool_cache.ts";
import { Stepper } from "../json/slices.ts";

/** The PostgreSQL schema of pins and the tool cache (the SQLite one's columns, 64-bit times). */
export const pgHubMigrations: PgMigration[] = [{
  id: "tool_cache/1",
  sql: `
    CREATE TABLE tool_cache (
      server TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      tools TEXT NOT NULL,
      updated_at BIGINT NOT NULL,
      instructions TEXT
    )`,
}, {
  // A list is kept as its parts (each a JSON array of whole tools, see `toolListParts`) joined by newlines,
  // with `hash`, the list text's `listHash`: each part is parsed on its own. Rows of the old form (one
  // text) are dropped: the servers list their tools again.
  id: "tool_cache/4",
  sql: `
    ALTER TABLE tool_cache ADD COLUMN hash TEXT;
    DELETE FROM tool_cache`,
}, {
  id: "tool_pins/1",
  sql: `
    CREATE TABLE tool_pins (
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      hash TEXT,
      definition TEXT,
      pending_hash TEXT,
      pending_definition TEXT,
      changed_at BIGINT,
      first_seen BIGINT NOT NULL,
      approved_at BIGINT,
      PRIMARY KEY (server, tool)
    )`,
}, {
  // The era each server spoke when it last connected, by fingerprint (as SQLite's tool_cache/5).
  id: "server_era/1",
  sql: `
    CREATE TABLE server_era (
      fingerprint TEXT PRIMARY KEY,
      era TEXT NOT NULL,
      updated_at BIGINT NOT NULL
    )`,
}, {
  // As SQLite's tool_cache/6: a `legacy` row not found by a probe is probed once more.
  id: "server_era/2",
  sql: `ALTER TABLE server_era ADD COLUMN probed INTEGER NOT NULL DEFAULT 0`,
}];

/** Runs background writes one after another; a failure is reported once per run of failures. */
class WriteQueue {
  #tail: Promise<void> = Promise.resolve();
  #failing = false;
  constructor(readonly warn: (message: string) => void) {}

  push(write: () => Promise<unknown>): void {
    this.#tail = this.#tail.then(write).then(
      () => {
        this.#failing = false;
      },
      (error) => {
        if (!this.#failing) this.warn((error as Error)?.message ?? String(error));
        this.#failing = true;
      },
    );
  }

  /** Resolves when every queued write has been tried. */
  settled(): Promise<void> {
    return this.#tail;
  }
}

/** {@linkcode PinStore} on PostgreSQL: a snapshot checked synchronously, written through. */
export class PgToolPins implements PinStore {
  readonly #store: PgStore;
  readonly #clock: () => number;
  readonly #writes: WriteQueue;
  #rows = new Map<string, Map<string, PinRow>>();
  #loaded = false;

  constructor(store: PgStore, options: { clock?: () => number; warn?: (message: string) => void } = {}) {
    this.#store = store;
    this.#clock = options.clock ?? Date.now;
    this.#writes = new WriteQueue((m) => options.warn?.(`saving tool pins failed: ${m}`));
  }

  /** Reads every pin (before the servers start; again on {@linkcode PgToolPins.refresh}). */
  async load(): Promise<void> {
    const rows = await this.#store.run((sql) =>
      sql`SELECT server, tool, hash, definition, pending_hash, pending_definition, changed_at FROM tool_pins`
    );
    const next = new Map<string, Map<string, PinRow>>();
    for (const r of rows) {
      const server = String(r.server);
      let map = next.get(server);
      if (!map) next.set(server, map = new Map());
      map.set(String(r.tool), {
        tool: String(r.tool),
        hash: r.hash as string | null,
        definition: r.definition as string | null,
        pending_hash: r.pending_hash as string | null,
        pending_definition: r.pending_definition as string | null,
        changed_at: r.changed_at as number | null,
      });
    }
    // Writes still queued are this replica's newer knowledge: they win over what was read.
    await this.#writes.settled();
    this.#rows = next;
    this.#loaded = true;
  }

  /** Re-reads the pins, so approvals made anywhere (another replica, `mcphub approve`) are seen. */
  refresh(): Promise<void> {
    return this.load();
  }

  /** Checks a server's listed tools against the snapshot; the writes are queued (see `ToolPins.check`). */
  check(server: string, trust: Trust, tools: readonly ToolDefinition[]): PinVerdict {
    return runSteps(this.checkSteps(server, trust, tools));
  }

  /** {@linkcode PgToolPins.check} as a stepwise build, `PIN_CHUNK` tools a step. */
  checkSteps(server: string, trust: Trust, tools: readonly ToolDefinition[]): Generator<void, PinVerdict> {
    if (trust === "off") return unchecked(tools);
    if (!this.#loaded) {
      throw new Error(`the tool pins could not be read from ${this.#store.location}`);
    }
    const now = this.#clock();
    return chunkedVerdict(tools, (chunk) => {
      // Looked up at each step: a refresh between steps replaces the snapshot.
      let rows = this.#rows.get(server);
      if (!rows) this.#rows.set(server, rows = new Map());
      const { verdict, writes } = decidePins(rows, server, trust, chunk, now);
      this.#apply(server, rows, writes);
      return verdict;
    });
  }

  /** Records a check's writes in the snapshot and queues them for the database. */
  #apply(server: string, rows: Map<string, PinRow>, writes: readonly PinWrite[]): void {
    for (const w of writes) {
      const current = rows.get(w.tool);
      if (w.kind === "insert") {
        rows.set(w.tool, {
          tool: w.tool,
          hash: w.hash,
          definition: w.definition,
          pending_hash: w.pendingHash,
          pending_definition: w.pendingDefinition,
          changed_at: w.changedAt,
        });
        // First sighting anywhere wins: another replica may have recorded this tool meanwhile.
        this.#writes.push(() =>
          this.#store.run((sql) =>
            sql`INSERT INTO tool_pins (server, tool, hash, definition, pending_hash, pending_definition, changed_at,
                  first_seen)
                VALUES (${server}, ${w.tool}, ${w.hash}, ${w.definition}, ${w.pendingHash}, ${w.pendingDefinition},
                  ${w.changedAt}, ${w.at})
                ON CONFLICT (server, tool) DO NOTHING`
          )
        );
      } else if (current) {
        rows.set(w.tool, {
          ...current,
          pending_hash: w.pendingHash,
          pending_definition: w.pendingDefinition,
          changed_at: w.changedAt,
        });
        this.#writes.push(() =>
          this.#store.run((sql) =>
            sql`UPDATE tool_pins SET pending_hash = ${w.pendingHash}, pending_definition = ${w.pendingDefinition},
                  changed_at = ${w.changedAt}
                WHERE server = ${server} AND tool = ${w.tool}`
          )
        );
      }
    }
  }

  /** Accepts held definitions (one tool, one server, or all): see `ToolPins.approve`. */
  async approve(server?: string, tool?: string): Promise<{ server: string; tool: string }[]> {
    const now = this.#clock();
    const rows = await this.#store.run((sql) =>
      sql`UPDATE tool_pins SET hash = pending_hash, definition = pending_definition, pending_hash = NULL,
            pending_definition = NULL, changed_at = NULL, approved_at = ${now}
          WHERE pending_hash IS NOT NULL
            ${server === undefined ? sql`` : sql`AND server = ${server}`}
            ${tool === undefined ? sql`` : sql`AND tool = ${tool}`}
          RETURNING server, tool`
    );
    return rows.map((r) => ({ server: String(r.server), tool: String(r.tool) }))
      .sort((a, b) => a.server < b.server ? -1 : a.server > b.server ? 1 : a.tool < b.tool ? -1 : 1);
  }

  /** Every held definition with the approved one it differs from. */
  async changes(server?: string): Promise<ToolChange[]> {
    const rows = await this.#store.run((sql) =>
      sql`SELECT server, tool, definition, pending_definition, hash, changed_at FROM tool_pins
          WHERE pending_hash IS NOT NULL ${server === undefined ? sql`` : sql`AND server = ${server}`}
          ORDER BY server, tool`
    );
    return changesOf(rows as unknown as ChangeRow[]);
  }

  /** Resolves when the background writes so far were tried (tests, shutdown). */
  flush(): Promise<void> {
    return this.#writes.settled();
  }
}

interface CacheRow {
  fingerprint: string;
  /** The list's parts (`toolListParts`) joined by newlines (`JSON.stringify` writes none). */
  tools: string;
  /** `listHash` of the list's text; null: written by a version before `tool_cache/4` (not read). */
  hash: string | null;
  instructions: string | null;
}

/** {@linkcode ToolListCache} on PostgreSQL: a snapshot loaded at start, written through. */
export class PgToolCache implements ToolListCache {
  readonly #store: PgStore;
  readonly #clock: () => number;
  readonly #writes: WriteQueue;
  #rows = new Map<string, CacheRow>();
  /** Each server's era by fingerprint (snapshot, written through). */
  #eras = new Map<string, StoredEra>();

  constructor(store: PgStore, options: { clock?: () => number; warn?: (message: string) => void } = {}) {
    this.#store = store;
    this.#clock = options.clock ?? Date.now;
    this.#writes = new WriteQueue((m) => options.warn?.(`saving the tool-list cache failed: ${m}`));
  }

  /**
   * Servers whose row could not be read (corrupt, or of another form): the next save rewrites it, also
   * when the row's hash is the list's.
   */
  readonly #unreadable = new Set<string>();

  /** Reads every cached list (before the servers start). */
  async preload(): Promise<void> {
    const rows = await this.#store.run((sql) =>
      sql`SELECT server, fingerprint, tools, hash, instructions FROM tool_cache`
    );
    const eras = await this.#store.run((sql) => sql`SELECT fingerprint, era, probed FROM server_era`);
    for (const r of eras) {
      const era = storedEra(r.era, r.probed);
      if (era) this.#eras.set(String(r.fingerprint), era);
    }
    for (const r of rows) {
      this.#rows.set(String(r.server), {
        fingerprint: String(r.fingerprint),
        tools: String(r.tools),
        hash: r.hash === null ? null : String(r.hash),
        instructions: r.instructions as string | null,
      });
    }
  }

  load(server: string, fingerprint: string): ToolDefinition[] | undefined {
    return new Stepper(this.#loadSteps(server, fingerprint)).finish();
  }

  /**
   * {@linkcode PgToolCache.load} in steps: the snapshot's text (loaded by {@linkcode PgToolCache.preload})
   * parsed a part a step from the next turn of the event loop on (a 100,000-tool list is 18 MB).
   */
  loadAsync(server: string, fingerprint: string): Promise<ToolDefinition[] | undefined> {
    return new Promise((resolve) => setTimeout(resolve, 0))
      .then(() => new Stepper(this.#loadSteps(server, fingerprint)).finishAsync(TOOL_CACHE_READ_SLICE_MS));
  }

  *#loadSteps(server: string, fingerprint: string): Generator<void, ToolDefinition[] | undefined> {
    const row = this.#rows.get(server);
    if (!row || row.fingerprint !== fingerprint) return undefined;
    try {
      const tools = row.hash === null ? undefined : yield* joinedPartsSteps(row.tools, row.hash);
      if (tools) return tools;
    } catch {
      // Unreadable: as a corrupt row.
    }
    if (this.#rows.get(server) === row) this.#unreadable.add(server);
    return undefined;
  }

  save(
    server: string,
    fingerprint: string,
    tools: readonly ToolDefinition[],
    json?: string,
    hash?: string,
  ): void {
    const text = json ?? JSON.stringify(tools);
    const digest = hash ?? listHash(text);
    const old = this.#rows.get(server);
    if (old?.fingerprint === fingerprint && old.hash === digest && !this.#unreadable.has(server)) return;
    this.#unreadable.delete(server);
    // Until its parts are cut (in steps), the snapshot holds the whole text: one part.
    const row: CacheRow = {
      fingerprint,
      tools: text,
      hash: digest,
      instructions: old?.fingerprint === fingerprint ? old.instructions : null,
    };
    this.#rows.set(server, row);
    const cutting = text.length <= TOOL_CACHE_PART_CHARS
      ? undefined
      : new Stepper(toolPartsSteps(text, TOOL_CACHE_PART_CHARS)).finishAsync();
    const now = this.#clock();
    this.#writes.push(async () => {
      const stored = cutting ? (await cutting).join("\n") : text;
      if (this.#rows.get(server) === row) row.tools = stored;
      await this.#store.run((sql) =>
        sql`INSERT INTO tool_cache (server, fingerprint, tools, hash, updated_at) VALUES (${server},
              ${fingerprint}, ${stored}, ${digest}, ${now})
            ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, tools = excluded.tools,
              hash = excluded.hash, updated_at = excluded.updated_at`
      );
    });
  }

  loadEra(fingerprint: string): StoredEra | undefined {
    return this.#eras.get(fingerprint);
  }

  saveEra(fingerprint: string, era: StoredEra): void {
    this.#eras.set(fingerprint, era);
    const now = this.#clock();
    this.#writes.push(() =>
      this.#store.run((sql) =>
        sql`INSERT INTO server_era (fingerprint, era, updated_at, probed) VALUES (${fingerprint}, ${era}, ${now}, 1)
            ON CONFLICT (fingerprint) DO UPDATE SET era = excluded.era, updated_at = excluded.updated_at,
              probed = 1`
      )
    );
  }

  loadInstructions(server: string, fingerprint: string): string | undefined {
    const row = this.#rows.get(server);
    return row && row.fingerprint === fingerprint && row.instructions !== null ? row.instructions : undefined;
  }

  saveInstructions(server: string, fingerprint: string, instructions: string | undefined): void {
    const row = this.#rows.get(server);
    if (!row || row.fingerprint !== fingerprint) return;
    row.instructions = instructions ?? null;
    this.#writes.push(() =>
      this.#store.run((sql) =>
        sql`UPDATE tool_cache SET instructions = ${instructions ?? null}
            WHERE server = ${server} AND fingerprint = ${fingerprint}`
      )
    );
  }

  /** Resolves when the background writes so far were tried. */
  flush(): Promise<void> {
    return this.#writes.settled();
  }
}
