/**
 * One running gateway process: the store, the hub, the upstream server on a
 * pair of streams, and an orderly stop.
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import { type DatabaseSync, openStore } from "../store/mod.ts";
import { getResultResponse, OutOfScopeError, Spool, spoolMigrations } from "../spool/mod.ts";
import { intelligenceMigrations, Recorder, statsMetaTool } from "../intelligence/mod.ts";
import { Hub } from "./hub.ts";
import { Gateway, invalidParams, type MetaHandler } from "./gateway.ts";
import { StdioServerTransport } from "./stdio.ts";
import { invalidRequest } from "./errors.ts";
import { StoreToolCache, toolCacheMigrations } from "./tool_cache.ts";
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
      migrations: [...spoolMigrations, ...intelligenceMigrations, ...toolCacheMigrations, ...authMigrations],
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

/** Starts the gateway: answers `initialize` at once while the servers connect. */
export function startGateway(options: StartGatewayOptions): RunningGateway {
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
  const hub = new Hub({
    config,
    env: options.env,
    agent: options.agent,
    version: options.version,
    log,
    finalize: { spool: () => spool, warn: warnOnce },
    onCall: (event) => recorder.record(event),
    toolCache: db ? new StoreToolCache(db) : undefined,
    authStore: db ? new AuthStore(db) : undefined,
    loginCommand: options.loginCommand,
  });

  const getResult: MetaHandler = (args) => {
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
      return getResultResponse(spool, { callId: args.callId, cursor: args.cursor, encoding: args.encoding }, {
        budget: hub.config.responseBudget,
        canRead: (meta) => hub.inScope(meta.server, meta.tool),
      });
    } catch (error) {
      if (error instanceof OutOfScopeError) invalidRequest(`get_result: ${error.message}`);
      if (error instanceof RangeError || error instanceof TypeError) {
        invalidParams(`get_result: ${error.message}`);
      }
      throw error;
    }
  };

  const stats: MetaHandler = async () => {
    await recorder.flush();
    if (!db) {
      return {
        totals: { calls: 0, est_tokens: 0, total_ms: 0, errors: 0, spooled_results: 0, tokens_kept_out: 0 },
        servers: [],
      };
    }
    return { ...statsMetaTool(db, { agent: options.agent }) };
  };

  let hubStarted = false;
  const startHub = () => {
    if (hubStarted) return;
    hubStarted = true;
    void hub.start();
  };
  const gateway = new Gateway(hub, {
    version: options.version,
    log,
    handlers: { get_result: getResult, stats },
    // Downstream sessions start after the host's initialize, declaring the host's client capabilities.
    start: () => startHub(),
  });
  const transport = new StdioServerTransport(options.input, options.output);

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
      await hub.close();
      await recorder.close().catch(() => {});
      db?.close();
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
