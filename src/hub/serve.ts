/**
 * One running gateway process: the store, the hub, the upstream server on a
 * pair of streams, and an orderly stop.
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import { type DatabaseSync, openStore } from "../store/mod.ts";
import {
  getResultResponse,
  OutOfScopeError,
  Spool,
  spoolMigrations,
  unavailableResponse,
} from "../spool/mod.ts";
import { intelligenceMigrations, Recorder, statsMetaTool } from "../intelligence/mod.ts";
import { type CallEvent, Hub } from "./hub.ts";
import { Gateway, invalidParams, type MetaHandler } from "./gateway.ts";
import type { MetaToolName } from "./meta_tools.ts";
import { StdioServerTransport } from "./stdio.ts";
import { SessionRelay } from "./passthrough.ts";
import { StoreToolCache, toolCacheMigrations } from "./tool_cache.ts";
import { toolPinMigrations, ToolPins } from "./pinning.ts";
import { authMigrations, AuthStore } from "../auth/mod.ts";

/** What {@linkcode startGateway} needs. */
export interface StartGatewayOptions {
  config: Config;
  agent?: string;
  env: Record<string, string>;
  version: string;
  log: (line: string) => void;
  /** The SQLite store; undefined = no store (nothing spooled or recorded). */
  storePath?: string;
  input: ReadableStream<Uint8Array>;
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

function openGatewayStore(path: string | undefined, log: (line: string) => void): DatabaseSync | undefined {
  if (!path) return undefined;
  try {
    return openStore(path, {
      migrations: [
        ...spoolMigrations,
        ...intelligenceMigrations,
        ...toolCacheMigrations,
        ...authMigrations,
        ...toolPinMigrations,
      ],
    });
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
  };

/**
 * The parts one gateway process shares between its upstream sessions: the store, the recorder and the
 * hub with its downstream connections. Each upstream session gets its own {@linkcode Gateway} from
 * {@linkcode GatewayCore.gateway}; an agent's sessions share one scoped view of the hub.
 */
export interface GatewayCore {
  /** The hub that owns the downstream connections (scoped to `options.agent` when given). */
  hub: Hub;
  /** The store, when there is one. */
  db?: DatabaseSync;
  /** The hub as `agent` sees it: a view over `hub`'s connections (one per agent, reused); undefined = `hub`. */
  view(agent?: string): Hub;
  /**
   * A new upstream server over `hub` (or a view of it), with the store's meta-tools; `start` is called
   * once its host has initialized (see {@linkcode GatewayOptions.start}).
   */
  gateway(hub: Hub, start?: () => void): Gateway;
  /** Flushes pending call records. */
  flush(): Promise<void>;
  /** Closes the views, the hub (every downstream), the recorder and the store. */
  close(): Promise<void>;
}

/** Opens the store and the hub (not yet started: call `hub.start()`). */
export function openGatewayCore(options: GatewayCoreOptions): GatewayCore {
  const { config, log } = options;
  const db = openGatewayStore(options.storePath, log);
  const spool = db ? new Spool(db) : undefined;
  let warned = false;
  const warnOnce = (message: string) => {
    if (warned) return;
    warned = true;
    log(`warning: ${message}`);
  };
  const recorder = new Recorder(db, { warn: (m) => log(`warning: ${m}`), enabled: config.record });
  const hubOptions = {
    config,
    env: options.env,
    version: options.version,
    log,
    finalize: { spool: () => spool, warn: warnOnce },
    onCall: (event: CallEvent) => recorder.record(event),
    toolCache: db ? new StoreToolCache(db) : undefined,
    pins: db ? new ToolPins(db) : undefined,
    authStore: db ? new AuthStore(db) : undefined,
    loginCommand: options.loginCommand,
  };
  const hub = new Hub({ ...hubOptions, agent: options.agent });
  const views = new Map<string, Hub>();
  // One relay for every upstream session: downstream sessions are the hub's, shared by the views.
  const relay = new SessionRelay(hub, { shared: options.shared ?? false, log });

  const handlers = (hub: Hub): Partial<Record<MetaToolName, MetaHandler>> => ({
    get_result: (args) => {
      if (!spool) {
        return {
          status: "unavailable",
          reason: "This gateway has no result store.",
          callId: args.callId ?? null,
        };
      }
      try {
        spool.maybePrune();
      } catch (error) {
        log(`warning: pruning expired results failed: ${(error as Error).message}`);
      }
      try {
        // The stored result's server/tool is re-checked against this gateway's current scope.
        return getResultResponse(
          spool,
          { callId: args.callId, cursor: args.cursor, encoding: args.encoding },
          {
            budget: hub.config.responseBudget,
            canRead: (meta) => hub.inScope(meta.server, meta.tool),
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
      if (!db) {
        return {
          totals: { calls: 0, est_tokens: 0, total_ms: 0, errors: 0, spooled_results: 0, tokens_kept_out: 0 },
          servers: [],
        };
      }
      return { ...statsMetaTool(db, { agent: hub.agent }) };
    },
  });

  return {
    hub,
    db,
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
    gateway: (scoped, start) =>
      new Gateway(scoped, { version: options.version, log, handlers: handlers(scoped), relay, start }),
    flush: () => recorder.flush(),
    async close() {
      await Promise.allSettled([...views.values()].map((view) => view.close()));
      await hub.close();
      await recorder.close().catch(() => {});
      db?.close();
    },
  };
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
