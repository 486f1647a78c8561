/**
 * The tool-list cache: each server's last good `tools/list`, kept in the store
 * and keyed by a fingerprint of that server's config entry, so that a gateway
 * answers its first `tools/list` with every tool while the servers are still
 * starting. An entry whose fingerprint no longer matches is not used.
 *
 * @module
 */
import type { DatabaseSync, Migration } from "../store/mod.ts";
import type { ToolDefinition } from "./mod.ts";
import { parseJson } from "../json/mod.ts";
import { Stepper } from "../json/slices.ts";
import { nodeCrypto } from "./hashing.ts";
import { serverFingerprint } from "./cached_instructions.ts";

/** The store migrations of the tool cache. */
export const toolCacheMigrations: Migration[] = [{
  id: "tool_cache/1",
  sql: `
    CREATE TABLE tool_cache (
      server TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      tools TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
}, {
  // Each server's `instructions` (from its initialize result), for the gateway's own instructions.
  id: "tool_cache/2",
  sql: "ALTER TABLE tool_cache ADD COLUMN instructions TEXT",
}, {
  // A large list is kept in parts (each written in its own short transaction), under a generation that
  // becomes the row's in one small last transaction; `hash` ({@linkcode listHash} of the list's text)
  // tells a changed list without comparing it. `generation` NULL: the list is in `tools` (a small one,
  // or one written before this migration, when `hash` is NULL too).
  id: "tool_cache/3",
  sql: `
    ALTER TABLE tool_cache ADD COLUMN hash TEXT;
    ALTER TABLE tool_cache ADD COLUMN generation INTEGER;
    ALTER TABLE tool_cache ADD COLUMN parts INTEGER;
    CREATE TABLE tool_cache_parts (
      server TEXT NOT NULL,
      generation INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      text TEXT NOT NULL,
      PRIMARY KEY (server, generation, seq)
    )`,
}, {
  // Parts are cut between tools (see {@linkcode toolListParts}): each is a JSON array of whole tools,
  // parsed on its own. Parts cut anywhere (tool_cache/3) and rows without a hash are dropped: the
  // servers list their tools again, and the next save writes them in the new form.
  id: "tool_cache/4",
  sql: `
    DELETE FROM tool_cache_parts;
    DELETE FROM tool_cache WHERE generation IS NOT NULL OR hash IS NULL`,
}, {
  // The protocol era each server spoke when it last connected, by fingerprint ({@linkcode serverFingerprint}:
  // command and args, or URL): a server known to speak 2026-07-28 is probed with server/discover first.
  id: "tool_cache/5",
  sql: `
    CREATE TABLE server_era (
      fingerprint TEXT PRIMARY KEY,
      era TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
}, {
  // `probed`: 1 when the era was found under the rule of tool_cache/6 on (a server of unknown era is
  // opened with server/discover, or, when that failed, found legacy after it). A `legacy` row without it
  // was written before (by an initialize-first opening, which a server serving both revisions accepts):
  // such a server is probed once more.
  id: "tool_cache/6",
  sql: `ALTER TABLE server_era ADD COLUMN probed INTEGER NOT NULL DEFAULT 0`,
}];

/** A protocol era as the store keeps it. */
export type StoredEra = "legacy" | "modern";

/**
 * A `server_era` row's era as the gateway trusts it: a `legacy` row not found by a probe (written before
 * servers of unknown era were probed first; see tool_cache/6) counts as unknown.
 */
export function storedEra(era: unknown, probed: unknown): StoredEra | undefined {
  if (era === "modern") return era;
  return era === "legacy" && Number(probed) === 1 ? era : undefined;
}

/** Where the hub keeps and finds cached tool lists. */
export interface ToolListCache {
  /** The server's cached list for this fingerprint; undefined when there is none (or it cannot be read). */
  load(server: string, fingerprint: string): ToolDefinition[] | undefined;
  /**
   * {@linkcode ToolListCache.load} in steps (read and parsed in slices, from the next turn of the event
   * loop on): what the hub uses at start when the cache has it. Never rejects.
   */
  loadAsync?(server: string, fingerprint: string): Promise<ToolDefinition[] | undefined>;
  /**
   * `json`: `JSON.stringify(tools)`, when the caller has it (a large list is serialized in slices), and
   * `hash`: its {@linkcode listHash}, when it has that too (an unchanged list is then not compared again).
   * A promise when the list is written in steps: settles once it is (rejects when that failed).
   */
  save(
    server: string,
    fingerprint: string,
    tools: readonly ToolDefinition[],
    json?: string,
    hash?: string,
  ): void | Promise<void>;
  /** Finishes the writes under way at once, holding the event loop (the store is closed next). */
  finishWrites?(): void;
  /** The server's last known `instructions` (after its tools were saved with this fingerprint). */
  loadInstructions?(server: string, fingerprint: string): string | undefined;
  saveInstructions?(server: string, fingerprint: string, instructions: string | undefined): void;
  /** The era the server of `fingerprint` spoke when it last connected; undefined when not known. */
  loadEra?(fingerprint: string): StoredEra | undefined;
  saveEra?(fingerprint: string, era: StoredEra): void;
}

export { serverFingerprint };

/** Identifies a list's JSON text: SHA-256 of its UTF-8, hex (fed in pieces by {@linkcode listHashSteps}). */
export function listHash(json: string): string {
  return nodeCrypto().createHash("sha256").update(json).digest("hex");
}

/** Characters of a list's text hashed between two yields. */
const HASH_CHARS = 1024 * 1024;

/** {@linkcode listHash} in steps (an 18 MB list takes ~50 ms to hash). */
export function* listHashSteps(json: string): Generator<void, string> {
  const hash = nodeCrypto().createHash("sha256");
  for (let at = 0; at < json.length;) {
    let end = Math.min(json.length, at + HASH_CHARS);
    // Never between the halves of a surrogate pair (each half alone would be hashed as U+FFFD).
    const last = json.charCodeAt(end - 1);
    if (end < json.length && last >= 0xd800 && last <= 0xdbff) end--;
    hash.update(json.slice(at, end));
    at = end;
    yield;
  }
  return hash.digest("hex");
}

/**
 * Characters of a list's text per part: a longer list is kept in parts, each a JSON array of whole tools
 * of at most this many characters (unless one tool alone is longer), written and read a part a step.
 */
export const TOOL_CACHE_PART_CHARS = 512 * 1024;

/**
 * Slices of a write, in ms: short, as one step (a part's checkpoint, its fsync) can take ~20 ms on a
 * busy disk on top of the slice.
 */
const WRITE_SLICE_MS = 2;

/**
 * Slices of a read, in ms: about one part (read, parsed and hashed in ~5 ms) a slice, as the new objects
 * of each part bring young-generation collections on top.
 */
export const TOOL_CACHE_READ_SLICE_MS = 3;

/** Parts of a replaced list deleted per step. */
const PARTS_DELETED_PER_STEP = 2;

/** Characters of a list's text scanned for tool boundaries between two yields (~1 ms). */
const SCAN_CHARS = 512 * 1024;

/**
 * A list's text (`JSON.stringify` of an array: no whitespace between tokens) cut between tools, in steps:
 * each part `[` + whole tools + `]`, at most `partChars` characters unless one tool alone is longer.
 * `"[" + parts.map((p) => p.slice(1, -1)).join(",") + "]"` is the text again.
 *
 * @throws {SyntaxError} when `text` is not a JSON array
 */
export function* toolPartsSteps(text: string, partChars: number): Generator<void, string[]> {
  if (text.charCodeAt(0) !== 0x5b) throw new SyntaxError("The tool list is not a JSON array");
  const parts: string[] = [];
  // The part under way begins at `start`; `cut` ends its last whole tool (at a top-level comma).
  let start = 1;
  let cut = -1;
  let depth = 0;
  let inString = false;
  let budget = SCAN_CHARS;
  for (let i = 1; i < text.length; i++) {
    if (--budget === 0) {
      budget = SCAN_CHARS;
      yield;
    }
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && depth > 0) depth--;
    else if (c === 0x2c || c === 0x5d) {
      if (depth !== 0) continue;
      // A tool ends at `i`: the part so far is closed before it when it would grow past the size.
      if (i - start + 2 > partChars && cut > start) {
        parts.push(`[${text.slice(start, cut)}]`);
        start = cut + 1;
      }
      cut = i;
      if (c === 0x5d) {
        if (i !== text.length - 1) throw new SyntaxError("The tool list has text after its end");
        if (i > start) parts.push(`[${text.slice(start, i)}]`);
        return parts;
      }
    }
  }
  throw new SyntaxError("The tool list ends early");
}

/** {@linkcode toolPartsSteps} at once. */
export function toolListParts(text: string, partChars = TOOL_CACHE_PART_CHARS): string[] {
  return new Stepper(toolPartsSteps(text, partChars)).finish();
}

/**
 * Parts (from {@linkcode toolPartsSteps}) parsed and checked against `hash`, the {@linkcode listHash} of
 * the list's whole text, a part a step: each part with native `JSON.parse` (a 512 Ki-character part:
 * ~3 ms) through {@linkcode parseJson}.
 */
class PartReader {
  readonly tools: ToolDefinition[] = [];
  readonly #hash = nodeCrypto().createHash("sha256");
  #parts = 0;

  /** Adds a part; false when it is not a JSON array of tools (a corrupt part). */
  add(part: string): boolean {
    let tools: unknown;
    try {
      tools = parseJson(part);
    } catch {
      return false;
    }
    if (!Array.isArray(tools)) return false;
    this.#hash.update(this.#parts++ === 0 ? "[" : ",");
    this.#hash.update(part.slice(1, -1));
    for (const tool of tools) this.tools.push(tool);
    return true;
  }

  /** The hash of the list's text that the parts make. */
  digest(): string {
    if (this.#parts === 0) this.#hash.update("[");
    return this.#hash.update("]").digest("hex");
  }
}

/**
 * The tools of a list kept as {@linkcode toolListParts} joined by newlines (the shared store's form:
 * `JSON.stringify` writes no raw newline), a part a step; undefined when the text does not match `hash`.
 */
export function* joinedPartsSteps(
  text: string,
  hash: string,
): Generator<void, ToolDefinition[] | undefined> {
  const reader = new PartReader();
  for (let at = 0; at < text.length;) {
    const end = text.indexOf("\n", at);
    const stop = end < 0 ? text.length : end;
    if (!reader.add(text.slice(at, stop))) return undefined;
    at = stop + 1;
    yield;
  }
  return reader.digest() === hash ? reader.tools : undefined;
}

interface CacheRow {
  fingerprint: string;
  /** NULL in a row written before `tool_cache/3`. */
  hash: string | null;
  /** NULL: the list is in `tools`; else in `parts` parts of `tool_cache_parts` under this generation. */
  generation: number | null;
  parts: number | null;
}

/** A write of one server's list (or instructions), run in steps after the ones before it. */
interface Job {
  steps: Generator<void, void>;
  stepper?: Stepper<void>;
  settle: PromiseWithResolvers<void>;
  /** A save's list: a save waiting behind a running one is replaced by a later one. */
  save?: { fingerprint: string; hash: string };
}

/** Options of {@linkcode StoreToolCache}. */
export interface StoreToolCacheOptions {
  /** @default TOOL_CACHE_PART_CHARS (tests make parts tiny) */
  partChars?: number;
}

/**
 * {@linkcode ToolListCache} over a store opened with {@linkcode toolCacheMigrations}.
 *
 * A list of up to {@linkcode TOOL_CACHE_PART_CHARS} characters is one row, written in one statement. A
 * longer one (a 100,000-tool list is 18 MB) is written in parts, each in its own short transaction with a
 * turn of the event loop between them, under a new generation; one small last transaction makes that
 * generation the row's (after checking that all its parts are there), and the replaced generation's
 * parts are then deleted in steps. A reader (this process or another sharing the file) sees the old list
 * or the new one, whole; a crash before the last transaction leaves the old one, and the next save
 * deletes the parts it left. {@linkcode StoreToolCache.loadAsync} reads it in steps (a gateway's start:
 * it serves meanwhile); {@linkcode StoreToolCache.load} at once. Writes of one server run one after another;
 * a save waiting behind a running one is replaced by a later save, and
 * {@linkcode StoreToolCache.finishWrites} ends them at once (before the store is closed).
 */
export class StoreToolCache implements ToolListCache {
  readonly #db: DatabaseSync;
  readonly #clock: () => number;
  readonly #partChars: number;
  /** The writes of each server under way (the first runs), in order. */
  readonly #lanes = new Map<string, Job[]>();

  constructor(db: DatabaseSync, clock: () => number = Date.now, options: StoreToolCacheOptions = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#partChars = options.partChars ?? TOOL_CACHE_PART_CHARS;
    if (!Number.isSafeInteger(this.#partChars) || this.#partChars < 2) {
      throw new RangeError(`partChars must be an integer of at least 2, got ${options.partChars}`);
    }
  }

  /**
   * What this process last read or wrote of each server's list: its fingerprint and the hash of its text.
   * A save of the same list is then a look at the row's fingerprint and hash, not a hash of 18 MB (its
   * first save after a start included: the load hashed what it read).
   */
  readonly #known = new Map<string, { fingerprint: string; hash: string }>();

  #row(server: string): CacheRow | undefined {
    return this.#db.prepare("SELECT fingerprint, hash, generation, parts FROM tool_cache WHERE server = ?")
      .get(server) as CacheRow | undefined;
  }

  /**
   * Servers whose row this process could not read (corrupt, or in a form it does not read): the next save
   * rewrites it, also when the row's hash is the list's.
   */
  readonly #unreadable = new Set<string>();

  load(server: string, fingerprint: string): ToolDefinition[] | undefined {
    return new Stepper(this.#loadSteps(server, fingerprint)).finish();
  }

  /**
   * {@linkcode StoreToolCache.load} in steps, from the next turn of the event loop on: a part read, parsed
   * and hashed a step.
   */
  loadAsync(server: string, fingerprint: string): Promise<ToolDefinition[] | undefined> {
    return new Promise((resolve) => setTimeout(resolve, 0)).then(() =>
      new Stepper(this.#loadSteps(server, fingerprint)).finishAsync(TOOL_CACHE_READ_SLICE_MS)
    );
  }

  /** The server's list for `fingerprint`; a row that cannot be read whole is cold (and rewritten). */
  *#loadSteps(server: string, fingerprint: string): Generator<void, ToolDefinition[] | undefined> {
    let row: CacheRow | undefined;
    try {
      row = this.#row(server);
      if (!row || row.fingerprint !== fingerprint) return undefined;
      const tools = row.generation === null
        ? this.#readRow(server, row)
        : yield* this.#readParts(server, row);
      if (tools) return tools;
    } catch {
      // Unreadable: as a corrupt row.
    }
    if (row?.fingerprint === fingerprint) {
      this.#unreadable.add(server);
      this.#known.delete(server);
    }
    return undefined;
  }

  /** A list kept in the row itself, checked against the row's hash. */
  #readRow(server: string, row: CacheRow): ToolDefinition[] | undefined {
    const text = (this.#db.prepare("SELECT tools FROM tool_cache WHERE server = ?").get(server) as
      | { tools: string }
      | undefined)?.tools;
    if (text === undefined || row.hash === null || listHash(text) !== row.hash) return undefined;
    const tools = parseJson(text);
    if (!Array.isArray(tools)) return undefined;
    this.#known.set(server, { fingerprint: row.fingerprint, hash: row.hash });
    return tools as ToolDefinition[];
  }

  /**
   * A list kept in parts, a part read, parsed and hashed a step, checked against the row's hash:
   * undefined when it cannot be read whole. A save that replaces the list meanwhile deletes these parts:
   * then the row is read again, and the new list.
   */
  *#readParts(server: string, row: CacheRow): Generator<void, ToolDefinition[] | undefined> {
    const fingerprint = row.fingerprint;
    const part = this.#db.prepare(
      "SELECT text FROM tool_cache_parts WHERE server = ? AND generation = ? AND seq = ?",
    );
    for (let attempt = 0; attempt < 3; attempt++) {
      const reader = new PartReader();
      let whole = true;
      for (let seq = 0; seq < (row.parts ?? 0); seq++) {
        const got = part.get(server, row.generation, seq) as { text: string } | undefined;
        if (!got) {
          whole = false;
          break;
        }
        if (!reader.add(got.text)) return undefined;
        yield;
      }
      if (whole) {
        if (row.hash === null || reader.digest() !== row.hash) return undefined;
        this.#known.set(server, { fingerprint, hash: row.hash });
        return reader.tools;
      }
      const now = this.#row(server);
      if (!now || now.fingerprint !== fingerprint) return undefined;
      if (now.generation === null) return this.#readRow(server, now);
      row = now;
    }
    return undefined;
  }

  save(
    server: string,
    fingerprint: string,
    tools: readonly ToolDefinition[],
    json?: string,
    hash?: string,
  ): void | Promise<void> {
    const lane = this.#lanes.get(server);
    if (hash !== undefined) {
      const last = lane?.findLast((job) => job.save);
      if (last) {
        // The same list as the save under way or waiting: nothing more to write.
        if (last.save!.fingerprint === fingerprint && last.save!.hash === hash) return last.settle.promise;
      } else if (!lane && !this.#unreadable.has(server)) {
        const known = this.#known.get(server);
        if (known?.fingerprint === fingerprint && known.hash === hash) {
          // The same list as the row held: unchanged unless another process rewrote it meanwhile.
          const row = this.#db.prepare("SELECT fingerprint, hash FROM tool_cache WHERE server = ?").get(
            server,
          ) as { fingerprint: string; hash: string | null } | undefined;
          if (row?.fingerprint === fingerprint && (row.hash === null || row.hash === hash)) return;
        }
      }
    }
    const text = json ?? JSON.stringify(tools);
    const digest = hash ?? listHash(text);
    const steps = this.#saveSteps(server, fingerprint, text, digest);
    if (!lane) {
      // Nothing under way: run it up to its first yield now (the whole write of a small list).
      if (steps.next().done) return;
    }
    return this.#enqueue(server, {
      steps,
      settle: Promise.withResolvers(),
      save: { fingerprint, hash: digest },
    });
  }

  /** Writes a list: in the row when small, else in parts then switched to in one small transaction. */
  *#saveSteps(server: string, fingerprint: string, text: string, hash: string): Generator<void, void> {
    const row = this.#row(server);
    if (row?.fingerprint === fingerprint && row.hash === hash && !this.#unreadable.has(server)) {
      // Unchanged (saved by another process meanwhile, or a list saved again before it was known).
      this.#known.set(server, { fingerprint, hash });
      return;
    }
    const upsert = this.#db.prepare(
      `INSERT INTO tool_cache (server, fingerprint, tools, hash, generation, parts, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, tools = excluded.tools,
         hash = excluded.hash, generation = excluded.generation, parts = excluded.parts,
         updated_at = excluded.updated_at`,
    );
    if (text.length <= this.#partChars) {
      upsert.run(server, fingerprint, text, hash, null, null, this.#clock());
      this.#known.set(server, { fingerprint, hash });
      this.#unreadable.delete(server);
      if (row?.generation !== null && row?.generation !== undefined) {
        yield;
        yield* this.#dropSteps(server);
      }
      return;
    }
    // A generation no other save uses (one in another process included): random, 47 bits.
    const generation = nodeCrypto().randomInt(1, 2 ** 47);
    const insert = this.#db.prepare(
      "INSERT INTO tool_cache_parts (server, generation, seq, text) VALUES (?, ?, ?, ?)",
    );
    const checkpoint = this.#db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
    // save() runs a save up to its first yield at once: a large list's parts wait for the next turn.
    yield;
    const texts = yield* toolPartsSteps(text, this.#partChars);
    const parts = texts.length;
    try {
      for (let seq = 0; seq < parts; seq++) {
        insert.run(server, generation, seq, texts[seq]!);
        yield;
        // The part copied into the database file now (~4 ms): else SQLite does it after a commit that
        // finds 1,000 pages in the log, ~30 ms in one piece. (Not inside another module's transaction.)
        if (!this.#db.isTransaction) checkpoint.get();
        yield;
      }
      // Inside another module's transaction on the shared connection (none holds one across a turn
      // today): a savepoint, which that transaction commits; else the write lock taken up front.
      const nested = this.#db.isTransaction;
      this.#db.exec(nested ? "SAVEPOINT tool_cache_switch" : "BEGIN IMMEDIATE");
      try {
        const { n } = this.#db.prepare(
          "SELECT COUNT(*) AS n FROM tool_cache_parts WHERE server = ? AND generation = ?",
        ).get(server, generation) as { n: number };
        if (Number(n) !== parts) {
          throw new Error(
            `the list of "${server}" was not cached: another process removed its parts while they were ` +
              "written (it saved the same server's list at the same time); the next list is saved again",
          );
        }
        upsert.run(server, fingerprint, "", hash, generation, parts, this.#clock());
        this.#db.exec(nested ? "RELEASE tool_cache_switch" : "COMMIT");
      } catch (error) {
        this.#db.exec(
          nested ? "ROLLBACK TO tool_cache_switch; RELEASE tool_cache_switch" : "ROLLBACK",
        );
        throw error;
      }
    } catch (error) {
      try {
        this.#db.prepare("DELETE FROM tool_cache_parts WHERE server = ? AND generation = ?").run(
          server,
          generation,
        );
      } catch {
        // Left for the next save to delete.
      }
      throw error;
    }
    this.#known.set(server, { fingerprint, hash });
    this.#unreadable.delete(server);
    yield;
    yield* this.#dropSteps(server);
  }

  /**
   * Deletes, in steps, the parts of the server's lists that are not its row's: the replaced list's, and
   * those a crash left. Each step looks the row's generation up again (another process may have saved).
   */
  *#dropSteps(server: string): Generator<void, void> {
    const drop = this.#db.prepare(
      `DELETE FROM tool_cache_parts WHERE rowid IN (SELECT rowid FROM tool_cache_parts WHERE server = ?
         AND generation IS NOT (SELECT generation FROM tool_cache WHERE server = ?) LIMIT ?)`,
    );
    while (Number(drop.run(server, server, PARTS_DELETED_PER_STEP).changes) > 0) yield;
  }

  /** Runs `job` after the server's writes under way; settles when it has run. */
  #enqueue(server: string, job: Job): Promise<void> {
    // Callers may drop the promise: a failure then is not an unhandled rejection.
    job.settle.promise.catch(() => {});
    let lane = this.#lanes.get(server);
    if (!lane) this.#lanes.set(server, lane = []);
    if (job.save) {
      // A save not started yet is replaced by this later one.
      for (let i = lane.length - 1; i >= 1; i--) {
        if (lane[i]!.save) lane.splice(i, 1)[0]!.settle.resolve();
      }
    }
    lane.push(job);
    if (lane.length === 1) void this.#pump(server, lane);
    return job.settle.promise;
  }

  async #pump(server: string, lane: Job[]): Promise<void> {
    // Not in the caller's turn (which may have had its slice already).
    await new Promise((resolve) => setTimeout(resolve, 0));
    while (lane.length > 0) {
      const job = lane[0]!;
      job.stepper ??= new Stepper(job.steps);
      try {
        await job.stepper.finishAsync(WRITE_SLICE_MS);
        job.settle.resolve();
      } catch (error) {
        job.settle.reject(error);
      }
      if (lane[0] === job) lane.shift();
    }
    if (this.#lanes.get(server) === lane) this.#lanes.delete(server);
  }

  /** Finishes every write under way now, holding the event loop (before the store is closed). */
  finishWrites(): void {
    for (const [server, lane] of this.#lanes) {
      while (lane.length > 0) {
        const job = lane[0]!;
        job.stepper ??= new Stepper(job.steps);
        try {
          job.stepper.finish();
          job.settle.resolve();
        } catch (error) {
          job.settle.reject(error);
        }
        lane.shift();
      }
      this.#lanes.delete(server);
    }
  }

  /** Resolves when the writes under way now have run (failed ones included). */
  async flush(): Promise<void> {
    await Promise.all(
      [...this.#lanes.values()].map((lane) => lane[lane.length - 1]?.settle.promise.catch(() => {})),
    );
  }

  loadInstructions(server: string, fingerprint: string): string | undefined {
    const row = this.#db.prepare("SELECT fingerprint, instructions FROM tool_cache WHERE server = ?").get(
      server,
    ) as { fingerprint: string; instructions: string | null } | undefined;
    return row && row.fingerprint === fingerprint && row.instructions !== null ? row.instructions : undefined;
  }

  loadEra(fingerprint: string): StoredEra | undefined {
    const row = this.#db.prepare("SELECT era, probed FROM server_era WHERE fingerprint = ?").get(
      fingerprint,
    ) as { era: string; probed: number } | undefined;
    return storedEra(row?.era, row?.probed);
  }

  saveEra(fingerprint: string, era: StoredEra): void {
    this.#db.prepare(
      `INSERT INTO server_era (fingerprint, era, updated_at, probed) VALUES (?, ?, ?, 1)
       ON CONFLICT (fingerprint) DO UPDATE SET era = excluded.era, updated_at = excluded.updated_at,
         probed = 1`,
    ).run(fingerprint, era, this.#clock());
  }

  saveInstructions(server: string, fingerprint: string, instructions: string | undefined): void {
    const write = () => {
      this.#db.prepare("UPDATE tool_cache SET instructions = ? WHERE server = ? AND fingerprint = ?")
        .run(instructions ?? null, server, fingerprint);
    };
    if (!this.#lanes.has(server)) return write();
    // After the list being written (the row may not have this fingerprint yet).
    void this.#enqueue(server, {
      steps: (function* (): Generator<void, void> {
        write();
        yield* [];
      })(),
      settle: Promise.withResolvers(),
    });
  }
}
