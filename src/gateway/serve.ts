/**
 * One running gateway process: the store, the hub, the upstream server on a
 * pair of streams, and an orderly stop.
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import {
  type DatabaseSync,
  DetachedRows,
  isPostgresUrl,
  type Migration,
  openStore,
  type PgMigration,
  pgpassPassword,
  pgQuotaMigrations,
  pgRendezvousMigrations,
  PgStore,
  rendezvousMigrations,
  sqliteReader,
  type SqlReader,
} from "../store/mod.ts";
// The light entries: what is needed before the host's `initialize` is answered (start-up time); paging
// and the stats queries are loaded on their first call.
import {
  PgSpool,
  pgSpoolMigrations,
  PRUNE_INTERVAL_MS,
  type ResultStore,
  Spool,
  spoolMigrations,
} from "../spool/light.ts";
import {
  intelligenceMigrations,
  pgIntelligenceMigrations,
  pgRecordSink,
  Recorder,
} from "../intelligence/light.ts";
import { type CallEvent, Hub } from "../hub/hub.ts";
import { Gateway, invalidParams, type MetaHandler } from "./gateway.ts";
import type { MetaToolName } from "../hub/meta_tools.ts";
import { type ByteSource } from "../json/lines.ts";
import { StdioServerTransport } from "./stdio_server.ts";
import type { HostStart } from "./early.ts";
import { SessionRelay } from "./relay.ts";
import { StoreToolCache, toolCacheMigrations, type ToolListCache } from "../catalog/tool_cache.ts";
import { type PinStore, toolPinMigrations, ToolPins } from "../trust/pinning.ts";
import { pgHubMigrations, PgToolCache, PgToolPins } from "../trust/pg_store.ts";
import { authMigrations, AuthStore } from "../auth/light.ts";
import type { GaugeReading, Telemetry } from "../telemetry/mod.ts";

/** What {@linkcode startGateway} needs. */
export interface StartGatewayOptions {
  config: Config;
  agent?: string;
  env: Record<string, string>;
  version: string;
  log: (line: string) => void;
  /**
   * The store: a SQLite file path, or a `postgres://` URL shared by replicas; undefined = no store (nothing
   * spooled or recorded).
   */
  storePath?: string;
  /**
   * The local file for OAuth tokens when `storePath` is a PostgreSQL URL (tokens stay on the machine).
   * @default no token store then
   */
  authStorePath?: string;
  input: ByteSource;
  /**
   * What was read of the host's input before the gateway loaded, and the `initialize` answered then
   * (see early.ts): read before `input`; that answer is not written again.
   */
  early?: Pick<HostStart, "head" | "answered">;
  output: WritableStream<Uint8Array>;
  /**
   * A synchronous write to the same pipe (`Deno.stdout.writeSync`), used for small batches: Deno's
   * asynchronous stdout write costs ~100 µs a call on a pipe (a thread hop), the synchronous one ~7 µs.
   */
  outputSync?: (bytes: Uint8Array) => number;
  /** The command that logs a server in, for `needs_auth`. @default `mcphub auth login NAME` */
  loginCommand?: (server: string) => string;
  /** How long shutdown waits for sessions to close. @default 5000 */
  shutdownMs?: number;
  /**
   * Connect the servers at once instead of after the host's `initialize` (a person at a terminal, where
   * no host may ever initialize): the servers are then offered no client capabilities. @default false
   */
  connectAtStart?: boolean;
  /** Spans and metrics (see telemetry/); undefined = none. */
  telemetry?: Telemetry;
}

/** A running gateway. */
export interface RunningGateway {
  hub: Hub;
  gateway: Gateway;
  /** Resolves once the gateway has stopped (stdin EOF or {@linkcode RunningGateway.stop}). */
  done: Promise<void>;
  /** Stops: closes the upstream session and every downstream, leaving no child process. */
  stop(): void;
}

const FILE_MIGRATIONS = [
  ...spoolMigrations,
  ...intelligenceMigrations,
  ...toolCacheMigrations,
  ...authMigrations,
  ...toolPinMigrations,
  ...rendezvousMigrations,
];

function openGatewayStore(
  path: string | undefined,
  log: (line: string) => void,
  migrations: readonly Migration[] = FILE_MIGRATIONS,
): DatabaseSync | undefined {
  if (!path) return undefined;
  try {
    return openStore(path, { migrations: [...migrations] });
  } catch (error) {
    log(
      `warning: ${
        (error as Error).message
      }; oversized results will pass through whole and calls are not recorded`,
    );
    return undefined;
  }
}

/** What {@linkcode openGatewayCore} needs: everything of {@linkcode StartGatewayOptions} but the streams. */
export type GatewayCoreOptions =
  & Omit<StartGatewayOptions, "input" | "output" | "shutdownMs" | "connectAtStart">
  & {
    /**
     * Many upstream sessions share the downstream ones (HTTP): these declare every relayed client capability
     * and route each server-to-client request to the session it belongs to. @default false (one host)
     */
    shared?: boolean;
    /** What an agent has had refused by its quota (HTTP listener), shown in its `stats`; undefined = none. */
    refusals?: (agent: string | undefined) => Record<string, number> | undefined;
  };

/**
 * The parts one gateway process shares between its upstream sessions: the store, the recorder and the
 * hub with its downstream connections. Each upstream session gets its own {@linkcode Gateway} from
 * {@linkcode GatewayCore.gateway}; an agent's sessions share one scoped view of the hub.
 */
export interface GatewayCore {
  /** The hub that owns the downstream connections (scoped to `options.agent` when given). */
  hub: Hub;
  /** The local store, when the store is a file. */
  db?: DatabaseSync;
  /** Read queries on the store (file or PostgreSQL), when there is one. */
  reader?: SqlReader;
  /** The hub as `agent` sees it: a view over `hub`'s connections (one per agent, reused); undefined = `hub`. */
  view(agent?: string): Hub;
  /**
   * A new upstream server over `hub` (or a view of it), with the store's meta-tools; `start` is called
   * once its host has initialized (see {@linkcode GatewayOptions.start}).
   */
  /**
   * `sessionless`: the gateway serves 2026-07-28 requests (no session): its detached calls are kept in the
   * store, so that `poll_result` is answered by any replica for the same agent (a 2025 session's stay its own).
   */
  gateway(hub: Hub, start?: () => void, sessionless?: boolean): Gateway;
  /** Flushes pending call records. */
  flush(): Promise<void>;
  /** Closes the views, the hub (every downstream), the recorder and the store. */
  close(): Promise<void>;
}

/** The store's parts as the gateway uses them, whichever database holds them. */
interface GatewayStore {
  /** The local SQLite database, when the store is a file. */
  db?: DatabaseSync;
  /** Read queries (stats, the live page). */
  reader?: SqlReader;
  spool?: ResultStore;
  recorder: Recorder;
  toolCache?: ToolListCache;
  pins?: PinStore;
  authStore?: AuthStore;
  /** Settles once a shared store's snapshots are loaded (or could not be). */
  ready?: Promise<void>;
  close(): Promise<void>;
}

/** Every migration of the shared PostgreSQL store, in order. */
export const pgStoreMigrations: readonly PgMigration[] = [
  ...pgSpoolMigrations,
  ...pgIntelligenceMigrations,
  ...pgHubMigrations,
  // The HTTP listener's shared per-agent quotas (its own pool applies them too: http/shared_quota.ts).
  ...pgQuotaMigrations,
  {
    // `mcphub store migrate`: the last call record copied from each local file, so a re-run copies only newer ones.
    id: "store_imports/1",
    sql:
      "CREATE TABLE store_imports (source TEXT PRIMARY KEY, last_call_id BIGINT NOT NULL, imported_at BIGINT NOT NULL)",
  },
  ...pgRendezvousMigrations,
];

/** The shared PostgreSQL store: every part on the pool, OAuth tokens in the local file. */
function openPgStore(url: string, options: GatewayCoreOptions): GatewayStore {
  const { log, config } = options;
  const env = { get: (key: string) => options.env[key] };
  const store = new PgStore(url, { migrations: pgStoreMigrations, password: pgpassPassword(url, env) });
  const warn = (m: string) => log(`warning: ${m}`);
  const local = options.authStorePath
    ? openGatewayStore(options.authStorePath, log, authMigrations)
    : undefined;
  const toolCache = new PgToolCache(store, { warn });
  const pins = new PgToolPins(store, { warn });
  const ready = Promise.all([toolCache.preload(), pins.load()]).then(() => {
    log(`store: ${store.location}`);
  }, (error) => {
    warn(
      `${(error as Error).message}; serving without the shared store for now: oversized results pass ` +
        "through whole, tool pins are not checked, and it is retried in the background",
    );
  });
  const scratch = scratchSpool(options.authStorePath, warn);
  const spool = new PgSpool(store, { scratch: scratch.open });
  // Retention runs hourly on every replica whether or not anyone pages a result (the delete is idempotent).
  const pruner = setInterval(() => {
    spool.maybePrune().catch((error) => warn(`pruning expired results failed: ${(error as Error).message}`));
  }, PRUNE_INTERVAL_MS);
  Deno.unrefTimer(pruner);
  return {
    reader: store,
    spool,
    recorder: new Recorder(pgRecordSink(store), { warn, enabled: config.record }),
    toolCache,
    pins,
    authStore: local ? new AuthStore(local) : undefined,
    ready,
    async close() {
      clearInterval(pruner);
      await Promise.allSettled([toolCache.flush(), pins.flush()]);
      await store.close();
      local?.close();
      scratch.close();
    },
  };
}

/**
 * The local scratch spool of a gateway on the shared store (see PgSpool.writer): a file of its own
 * beside the local store (`mcphub-scratch-PID.db`, a directory the gateway may write), opened on the
 * first result written as it arrives, emptied when opened, removed on close. Without a local store, or
 * when the file cannot be opened (warned once), results are stored once whole.
 */
function scratchSpool(localPath: string | undefined, warn: (message: string) => void): {
  open: () => Spool | undefined;
  close: () => void;
} {
  const cut = localPath ? Math.max(localPath.lastIndexOf("/"), localPath.lastIndexOf("\\")) : -1;
  const path = localPath && localPath !== ":memory:"
    ? `${cut >= 0 ? localPath.slice(0, cut + 1) : ""}mcphub-scratch-${Deno.pid}.db`
    : undefined;
  let opened: { db: DatabaseSync; spool: Spool } | null | undefined = path ? undefined : null;
  return {
    open() {
      if (opened === undefined) {
        try {
          const db = openStore(path!, { migrations: spoolMigrations });
          // Scratch: nothing in it outlives the process, so no write-ahead log (whose checkpoints held the
          // event loop now and then) and no syncs; the rollback journal stays, in memory.
          db.exec("PRAGMA journal_mode = MEMORY");
          db.exec("PRAGMA synchronous = OFF");
          db.exec("DELETE FROM spool_chunks");
          opened = { db, spool: new Spool(db) };
        } catch (error) {
          opened = null;
          warn(`${(error as Error).message}; oversized results are stored once whole`);
        }
      }
      return opened?.spool;
    },
    close() {
      if (!opened) return;
      opened.db.close();
      opened = null;
      for (const suffix of ["", "-wal", "-shm"]) {
        try {
          Deno.removeSync(`${path}${suffix}`);
        } catch {
          // gone already
        }
      }
    },
  };
}

function openStoreParts(options: GatewayCoreOptions): GatewayStore {
  if (isPostgresUrl(options.storePath)) return openPgStore(options.storePath, options);
  const { log, config } = options;
  const db = openGatewayStore(options.storePath, log);
  return {
    db,
    reader: db ? sqliteReader(db) : undefined,
    spool: db ? new Spool(db) : undefined,
    recorder: new Recorder(db, { warn: (m) => log(`warning: ${m}`), enabled: config.record }),
    toolCache: db ? new StoreToolCache(db) : undefined,
    pins: db ? new ToolPins(db) : undefined,
    authStore: db ? new AuthStore(db) : undefined,
    close: () => Promise.resolve(db?.close()),
  };
}

/** Opens the store and the hub (not yet started: call `hub.start()`). */
export function openGatewayCore(options: GatewayCoreOptions): GatewayCore {
  const { config, log, telemetry } = options;
  const parts = openStoreParts(options);
  const { db, reader, spool, recorder } = parts;
  let warned = false;
  const warnOnce = (message: string) => {
    if (warned) return;
    warned = true;
    log(`warning: ${message}`);
  };
  const hubOptions = {
    config,
    env: options.env,
    version: options.version,
    log,
    finalize: { spool: () => spool, warn: warnOnce },
    onCall: telemetry
      ? (event: CallEvent) => {
        telemetry.callRecorded(event.server, event.resultBytes, event.spooled);
        recorder.record(event);
      }
      : (event: CallEvent) => recorder.record(event),
    telemetry,
    toolCache: parts.toolCache,
    pins: parts.pins,
    storeReady: parts.ready,
    authStore: parts.authStore,
    loginCommand: options.loginCommand,
  };
  const hub = new Hub({ ...hubOptions, agent: options.agent });
  // Replicas (HTTP) share the detached calls of session-less requests, so that any answers poll_result.
  const detachedRows = options.shared && reader ? new DetachedRows(reader) : undefined;
  const views = new Map<string, Hub>();
  const unwatch = telemetry?.gauges(() => hubGauges(hub));
  const unwatchStore = reader && telemetry && watchStore(telemetry, reader, log);
  // One relay for every upstream session: downstream sessions are the hub's, shared by the views.
  const relay = new SessionRelay(hub, { shared: options.shared ?? false, log });

  const handlers = (hub: Hub): Partial<Record<MetaToolName, MetaHandler>> => ({
    get_result: async (args) => {
      if (!spool) {
        return {
          status: "unavailable",
          reason: "This gateway has no result store.",
          callId: args.callId ?? null,
        };
      }
      try {
        await spool.maybePrune();
      } catch (error) {
        log(`warning: pruning expired results failed: ${(error as Error).message}`);
      }
      const { getResultResponse, OutOfScopeError, unavailableResponse } = await import("../spool/mod.ts");
      try {
        // The stored result's server/tool is re-checked against this gateway's current scope.
        return await getResultResponse(
          spool,
          { callId: args.callId, cursor: args.cursor, encoding: args.encoding },
          {
            budget: hub.config.responseBudget,
            // run_code's results are the agent's own: another agent's are as unknown as made-up ids.
            canRead: (meta) =>
              hub.inScope(meta.server, meta.tool) && (meta.server !== "mcphub" || meta.agent === hub.agent),
          },
        );
      } catch (error) {
        // Exactly what an unknown id gets: an agent cannot tell another scope's ids from made-up ones.
        if (error instanceof OutOfScopeError) {
          return unavailableResponse(args.callId, hub.config.responseBudget);
        }
        if (error instanceof RangeError || error instanceof TypeError) {
          invalidParams(`get_result: ${error.message}`);
        }
        throw error;
      }
    },
    stats: async () => {
      await recorder.flush();
      const empty = {
        totals: { calls: 0, est_tokens: 0, total_ms: 0, errors: 0, spooled_results: 0, tokens_kept_out: 0 },
        servers: [],
      };
      if (!reader) {
        const refused = options.refusals?.(hub.agent);
        return refused ? { ...empty, refused } : empty;
      }
      try {
        const { statsMetaTool } = await import("../intelligence/mod.ts");
        const refused = options.refusals?.(hub.agent);
        return { ...await statsMetaTool(reader, { agent: hub.agent }), ...(refused ? { refused } : {}) };
      } catch (error) {
        // A shared store that is down: the gateway keeps serving; the agent is told why the figures are missing.
        log(`warning: reading stats failed: ${(error as Error).message}`);
        return { ...empty, unavailable: "The store cannot be read right now; try again shortly." };
      }
    },
  });

  return {
    hub,
    db,
    reader,
    view(agent) {
      if (agent === undefined || agent === options.agent) return hub;
      let view = views.get(agent);
      if (!view) {
        view = new Hub({ ...hubOptions, agent, base: hub });
        void view.start();
        views.set(agent, view);
      }
      return view;
    },
    gateway: (scoped, start, sessionless) =>
      new Gateway(scoped, {
        version: options.version,
        log,
        handlers: handlers(scoped),
        relay,
        start,
        usage: reader ? () => usageOf(reader, scoped.agent) : undefined,
        telemetry,
        detachedRows: sessionless ? detachedRows : undefined,
      }),
    flush: () => recorder.flush(),
    async close() {
      unwatch?.();
      unwatchStore?.();
      await Promise.allSettled([...views.values()].map((view) => view.close()));
      await hub.close();
      await recorder.close().catch(() => {});
      await parts.close();
    },
  };
}

/** How many days of call records `expose: auto` reads to find the most-used tools. */
const USAGE_DAYS = 30;

/** Calls per public name in the last {@linkcode USAGE_DAYS} days of `agent`'s records (every agent's when none). */
async function usageOf(reader: SqlReader, agent: string | undefined): Promise<Map<string, number>> {
  const { topTools } = await import("../intelligence/mod.ts");
  const since = Date.now() - USAGE_DAYS * 24 * 60 * 60 * 1000;
  const top = await topTools(reader, { limit: 500, since, agent });
  return new Map(top.map((t) => [t.namespaced, t.calls]));
}

/** The result store's gauges: results held and their bytes, queried before each scrape. */
function watchStore(telemetry: Telemetry, reader: SqlReader, log: (line: string) => void): () => void {
  let held: { results: number; bytes: number } | undefined;
  let warned = false;
  const stop = telemetry.refresher(async () => {
    try {
      const [row] = await reader.all(
        "SELECT COUNT(*) AS results, COALESCE(SUM(total_bytes), 0) AS bytes FROM spool_results",
      );
      held = { results: Number(row?.results ?? 0), bytes: Number(row?.bytes ?? 0) };
    } catch (error) {
      if (!warned) {
        log(`warning: reading the result store's size for metrics failed: ${(error as Error).message}`);
      }
      warned = true;
    }
  });
  const unwatch = telemetry.gauges(() =>
    held === undefined ? [] : [
      {
        name: "mcphub_store_results",
        help: "Results held in the result store (paged with get_result until they expire)",
        series: [{ labels: {}, value: held.results }],
      },
      {
        name: "mcphub_store_result_bytes",
        help: "Bytes of the results held in the result store",
        series: [{ labels: {}, value: held.bytes }],
      },
    ]
  );
  return () => (stop(), unwatch());
}

/** Every state a server can be in (`DownstreamState`): `mcphub_server_state` has a series for each. */
const SERVER_STATES = ["disabled", "connecting", "connected", "backoff", "failed", "needs_auth", "closed"];

/** The hub's gauges: each server's state (one series per state it can be in), tools and held tools. */
function hubGauges(hub: Hub): GaugeReading[] {
  const servers = hub.servers();
  return [
    {
      name: "mcphub_server_state",
      help: "1 for the state each configured server is in (server, state)",
      series: servers.flatMap((s) =>
        SERVER_STATES.map((state) => ({
          labels: { server: s.name, state },
          value: s.state === state ? 1 : 0,
        }))
      ),
    },
    {
      name: "mcphub_server_tools",
      help: "Tools a server offers, as last listed",
      series: servers.map((s) => ({ labels: { server: s.name }, value: s.tools })),
    },
    {
      name: "mcphub_tools_held",
      help: "Tools held until approved (a changed definition, or new under trust: pin)",
      series: servers.map((s) => ({ labels: { server: s.name }, value: s.held?.length ?? 0 })),
    },
  ];
}

/** Starts the gateway: answers `initialize` at once while the servers connect. */
export function startGateway(options: StartGatewayOptions): RunningGateway {
  const { log } = options;
  const core = openGatewayCore(options);
  const hub = core.hub;
  let hubStarted = false;
  const startHub = () => {
    if (hubStarted) return;
    hubStarted = true;
    void hub.start();
  };
  // Downstream sessions start after the host's initialize, declaring the host's client capabilities.
  const gateway = core.gateway(hub, startHub);
  const transport = new StdioServerTransport(options.input, options.output, {
    writeSync: options.outputSync,
    head: options.early?.head,
    answered: options.early?.answered,
    warn: log,
  });

  let stopping: Promise<void> | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => resolveDone = resolve);
  const stop = () => {
    stopping ??= (async () => {
      const grace = options.shutdownMs ?? 5000;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([gateway.close(), hub.close()]),
        new Promise((resolve) => timer = setTimeout(resolve, grace)),
      ]);
      clearTimeout(timer);
      await core.close();
      resolveDone();
    })();
  };
  transport.onclose = stop;
  gateway.connect(transport).then(() => {
    if (options.connectAtStart) startHub();
  }, (error) => {
    log(`cannot serve: ${(error as Error).message}`);
    stop();
  });
  return { hub, gateway, done, stop };
}
