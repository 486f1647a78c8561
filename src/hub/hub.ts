/**
 * The hub: every configured downstream, the catalog built from what they
 * list, name lookup, and the one call path every proxied call goes through
 * (call -> time -> finalize (size check -> spool or pass) -> record).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { AgentConfig, Config, ServerConfig } from "../config/mod.ts";
import type { CallRecord as CallEvent, CallVia } from "../intelligence/mod.ts";
import { CatalogIndex, catalogSteps, type CatalogTool, type PackedCatalogServer } from "../catalog/mod.ts";
import { listHashSteps, serverFingerprint, type ToolListCache } from "../catalog/tool_cache.ts";
import { messageOf, ProtocolError } from "../mcp/errors.ts";
import { type Client, McpError } from "../mcp/sdk.ts";
import { namespaceResultUris } from "./uris.ts";
import { META_TOOL_NAMES } from "./meta_tools.ts";
import {
  CallTimeoutError,
  Downstream,
  OutcomeUnknownError,
  type RestartPolicy,
  ServerUnavailableError,
} from "../downstream/downstream.ts";
import type { NameReference } from "../catalog/mod.ts";
import type { CallToolResult, Progress } from "../mcp/sdk.ts";
import { type FinalizeOptions, finalizeRawResult, finalizeResult, spillPolicy } from "./finalize.ts";
import { RawResult } from "../json/raw_json.ts";
import {
  type Discovery,
  INDEX_WORKER_MIN_TOOLS,
  IndexWorkerPool,
  localDiscovery,
  workerDiscovery,
} from "../resolver/index_host.ts";
import { Stepper } from "../json/slices.ts";
import { jsonTextSteps, SLICED_STRINGIFY_MIN_ITEMS } from "../json/sliced_json.ts";
import { agentServers } from "../config/light.ts";
import { serverEnvironment } from "../downstream/environment.ts";
import { rateLimitedLog } from "./log_limit.ts";
import { heldMessage, type HeldTool, PIN_CHUNK, type PinStore, type Trust } from "../trust/pinning.ts";
import { type InjectionMarker, toolMarkers } from "../trust/injection.ts";
import type { RejectedTool } from "../trust/limits.ts";
import { type PackedTool, packTool, type ToolDefinition, unpackTool } from "../catalog/mod.ts";
import { type AuthStore, serverAuth } from "../auth/light.ts";

/** How a call reached the hub, and the record of one finished call: the intelligence module's shapes. */
export type { CallRecord as CallEvent, CallVia } from "../intelligence/mod.ts";

/** What the hub is started with. */
export interface HubOptions {
  config: Config;
  /** The gateway's environment, inherited by stdio servers under their `env`. */
  env: Record<string, string>;
  /** The agent scope name; undefined = unscoped. */
  agent?: string;
  version: string;
  log: (line: string) => void;
  /** Where oversized results go (the finalize path); undefined = never spool. */
  finalize?: Pick<FinalizeOptions, "spool" | "warn">;
  /** Receives one event per proxied downstream call. Must not throw. */
  onCall?: (event: CallEvent) => void;
  /** How failing servers are restarted; `{maxFailures: 0}` for one-shot commands. */
  restartPolicy?: RestartPolicy;
  /** Each server's last good tool list, so the first `tools/list` is complete; undefined = no cache. */
  toolCache?: ToolListCache;
  /** OAuth tokens of remote servers; undefined = a 401 is a plain failure. */
  authStore?: AuthStore;
  /** The command that logs a server in, for `needs_auth`. @default `mcphub auth login NAME` */
  loginCommand?: (server: string) => string;
  /** Pinned tool definitions (the rug-pull defence); undefined = no pinning. */
  pins?: PinStore;
  /** Settles when the store's snapshots (a shared store's pins and cache) are loaded: servers start after. */
  storeReady?: Promise<void>;
  /**
   * A scoped view: share this hub's downstream connections (the servers in scope) instead of opening
   * any; it follows the base's reloads, and `start` and `close` leave the connections to `base`.
   */
  base?: Hub;
  /**
   * Catalogs of at least this many tools are indexed in a Web Worker (see `index_host.ts`), so the
   * index's garbage collection never pauses the gateway; `Infinity` = always in process.
   * @default {@link INDEX_WORKER_MIN_TOOLS}
   */
  indexWorkerMinTools?: number;
}

/** Options of {@linkcode Hub.call}. */
export interface HubCallOptions {
  via: CallVia;
  signal?: AbortSignal;
  /** Caller's `timeout_ms`; can only shorten `call_timeout`. */
  timeoutMs?: number;
  onProgress?: (progress: Progress) => void;
  /**
   * The caller can relay a result as bytes: the answer may be a {@linkcode RawResult} (the fast path),
   * measured, spooled and recorded exactly as a parsed one. @default false
   */
  raw?: boolean;
}

/** A server as `list_servers` and `mcphub list` show it. */
export interface ServerStatus {
  name: string;
  enabled: boolean;
  connected: boolean;
  state: string;
  tools: number;
  kind: "stdio" | "http" | "sse";
  target: string;
  description?: string;
  tags?: string[];
  use_when?: string[];
  error?: string;
  /** In state `backoff`: when the next restart attempt is due (ISO 8601). */
  next_attempt_at?: string;
  /** Consecutive failures since the last stable connection. */
  failures?: number;
  /** In state `needs_auth`: the command that logs the server in. */
  login_command?: string;
  /** Tools not mounted because they exceed the definition limits. */
  rejected?: RejectedTool[];
  /** Tools held until approved (changed definition, or new under `trust: pin`). */
  held?: { tool: string; status: "changed" | "new"; fields: string[]; since: string; approve: string }[];
  /** Mounted tools whose metadata carries known prompt-injection markers (flagged, not removed). */
  flagged?: { tool: string; markers: InjectionMarker[] }[];
}

/** What {@linkcode Hub.reconfigure} did, by server name in config order. */
export interface ReloadSummary {
  added: string[];
  changed: string[];
  removed: string[];
  kept: string[];
}

/** Fields of a server entry that only describe it: changing them keeps the server running. */
const DESCRIPTIVE = new Set(["name", "description", "tags", "useWhen", "toolUseWhen"]);

/**
 * Everything in a server entry that affects how it is started or talked to (command, args, env and
 * header values, url, oauth, enabled, a load error, …), as canonical JSON: equal text = same server.
 * Compared in memory only, never shown (values may be secrets).
 */
function startIdentity(server: ServerConfig): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === "object") {
      return Object.fromEntries(
        Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  const entry = Object.fromEntries(Object.entries(server).filter(([k]) => !DESCRIPTIVE.has(k)));
  return JSON.stringify(canonical(entry));
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** A tool list's JSON text for the cache and its hash, in steps. */
function* cacheTextSteps(tools: readonly ToolDefinition[]): Generator<void, { json: string; hash: string }> {
  const json = yield* jsonTextSteps(tools);
  return { json, hash: yield* listHashSteps(json) };
}

/** All downstream connections of one gateway process. */
export class Hub {
  readonly agent?: string;
  #config: Config;
  #scope?: AgentConfig;
  #configError?: string;
  #toolAllow?: Set<string>;
  #options: HubOptions;
  #downstreams = new Map<string, Downstream>();
  #catalog?: { tools: CatalogTool[]; index: CatalogIndex };
  /** The catalog being built in slices (see #catalogAsync). */
  #catalogSteps?: Stepper<{ tools: CatalogTool[]; index: CatalogIndex }>;
  #discovery?: Promise<Discovery>;
  /** Ends the current discovery index: stops its worker's build, or frees the built index. */
  #discoveryAbort?: AbortController;
  /** The index worker failed once: later catalogs are indexed in process. */
  #workerFailed = false;
  /** The index worker, kept from one large catalog's index to the next (started once, see #warmWorker). */
  #workers?: IndexWorkerPool;
  /** Pin verdicts per server, for the tool list they were computed from. */
  #verdicts = new Map<string, { tools: readonly PackedTool[]; verdict: PackedVerdict }>();
  /** Pin checks in progress (taken in slices by the catalog build), per server, for the list checked. */
  #verdictRuns = new Map<string, { tools: readonly PackedTool[]; steps: Stepper<PackedVerdict> }>();
  #pinTimer?: ReturnType<typeof setInterval>;
  #log: { log: (line: string) => void; flush: () => void };
  #listeners = new Set<() => void>();
  #closed = false;
  #running = false;
  #started = Promise.withResolvers<void>();
  #startup?: Promise<void>;
  #cacheWarned = false;
  #onClient?: (server: string, client: Client) => void;
  /** `namespace: false` name collisions, per server (see #withoutCollisions). */
  #collisions = new Map<string, string>();
  #collisionsLogged = new Set<string>();
  /** Each server's instructions: live once connected, else the cached ones. */
  #instructions = new Map<string, string>();
  /** Scoped views over this hub's connections (see HubOptions.base). */
  #views = new Set<Hub>();
  #detach?: () => void;

  constructor(options: HubOptions) {
    this.#log = rateLimitedLog(options.log);
    this.#options = { ...options, log: this.#log.log };
    options = this.#options;
    this.#config = options.config;
    this.agent = options.agent;
    this.#scope = this.#scopeOf(options.config);
    this.#toolAllow = this.#scope?.tools ? new Set(this.#scope.tools) : undefined;
    if (options.base) {
      options.base.#views.add(this);
      this.#followBase();
      return;
    }
    const ready = options.storeReady;
    this.#storeDone = ready === undefined;
    for (const server of this.#inScope(options.config)) {
      this.#downstreams.set(server.name, this.#newDownstream(server, options.config));
    }
    if (ready) {
      // A shared store's snapshot is in memory once it settles: its cached lists are read then.
      this.#storeRead = ready.catch(() => {}).then(() => {
        this.#storeDone = true;
        for (const d of this.#downstreams.values()) this.#readCache(d);
      });
    }
  }

  /** Settles once a shared store's snapshots are loaded (or could not be) and the cache reads are asked for. */
  #storeRead: Promise<void> = Promise.resolve();
  /** The store's snapshots are loaded: a new downstream's cached list is read at once. */
  #storeDone = true;
  /** Cache reads waiting for the store's snapshots, by downstream. */
  #cacheReads = new WeakMap<Downstream, () => void>();

  #readCache(d: Downstream): void {
    const read = this.#cacheReads.get(d);
    this.#cacheReads.delete(d);
    read?.();
  }

  /**
   * Settles once the cached lists of this hub's servers are read, checked and listed (after a shared
   * store's snapshots): local work in slices, never the servers. Never rejects.
   */
  async #cachedLists(): Promise<void> {
    await (this.#options.base ?? this).#storeRead;
    await Promise.all([...this.#downstreams.values()].map((d) => d.cacheLoaded));
  }

  /** A view: its servers are the base's connections in its scope (after every reload of the base). */
  #followBase(): void {
    const base = this.#options.base!;
    const fresh = new Map<string, Downstream>();
    for (const server of this.#inScope(this.#config)) {
      const shared = base.#downstreams.get(server.name);
      if (shared) fresh.set(server.name, shared);
    }
    this.#downstreams = fresh;
  }

  /** A view after its base applied `next`: an agent the edit removed keeps no server. */
  #rebase(next: Config): void {
    this.#config = next;
    try {
      this.#scope = this.#scopeOf(next);
    } catch {
      // The agent is gone from the config: nothing is in its scope any more.
      this.#scope = { ...this.#scope!, servers: [], tools: [] };
      this.#config = { ...next, agents: [...next.agents, this.#scope] };
    }
    this.#toolAllow = this.#scope?.tools ? new Set(this.#scope.tools) : undefined;
    this.#configError = undefined;
    this.#followBase();
    this.#changed();
  }

  /** The config in effect: top-level settings are read from it on every request. */
  get config(): Config {
    return this.#config;
  }

  /** The agent's scope; undefined when unscoped. */
  get scope(): AgentConfig | undefined {
    return this.#scope;
  }

  /** Why the config file's last edit was not applied (`file:line:col: …`); undefined when it was. */
  get configError(): string | undefined {
    return this.#configError;
  }

  /** Records that an edit of the config file was rejected; the running config stays in effect. */
  rejectConfig(message: string): void {
    this.#configError = message;
  }

  /** The agent entry of `--agent` in `config`; throws RangeError when it is not defined there. */
  #scopeOf(config: Config): AgentConfig | undefined {
    if (this.agent === undefined) return undefined;
    const agent = config.agents.find((a) => a.name === this.agent);
    if (!agent) {
      const names = config.agents.map((a) => a.name);
      throw new RangeError(
        `unknown agent "${this.agent}"; ${
          names.length ? `defined agents: ${names.join(", ")}` : "no agents are defined"
        }`,
      );
    }
    return agent;
  }

  /** The servers of `config` in the agent's scope (scope applies before connecting: others are never started). */
  #inScope(config: Config): ServerConfig[] {
    const agent = this.#scopeOf(config);
    // An agent scoped by `tools:` alone reaches only the servers those tools belong to.
    const inScope = agent?.servers || agent?.tools
      ? new Set(agentServers(agent, config.servers.map((s) => s.name)))
      : undefined;
    return config.servers.filter((server) => !inScope || inScope.has(server.name));
  }

  #newDownstream(server: ServerConfig, config: Config): Downstream {
    const options = this.#options;
    const fingerprint = serverFingerprint(server);
    const cache = options.toolCache;
    this.#instructions.delete(server.name);
    const onStateChange = () => {
      const d = this.#downstreams.get(server.name);
      if (d?.state === "connected") {
        const live = d.instructions;
        if (live !== this.#instructions.get(server.name)) {
          if (live) this.#instructions.set(server.name, live);
          else this.#instructions.delete(server.name);
          if (cache?.saveInstructions) {
            this.#cacheOp(() => cache.saveInstructions!(server.name, fingerprint, live));
          }
        }
      }
      this.#changed();
    };
    const d = new Downstream(server, {
      onToolsListed: cache && ((tools) => this.#cacheSave(cache, server.name, fingerprint, tools)),
      env: serverEnvironment(options.env, config, server),
      clientName: options.agent ? `mcphub/${options.agent}` : "mcphub",
      clientVersion: options.version,
      connectTimeoutMs: config.connectTimeoutMs,
      log: options.log,
      onToolsChanged: () => this.#changed(),
      onStateChange,
      restartPolicy: options.restartPolicy,
      auth: serverAuth(options.authStore, server, { loginCommand: options.loginCommand }),
      onClient: (client) => this.#onClient?.(server.name, client),
      spill: spillPolicy(
        () => ({ budget: this.config.responseBudget, verbatim: this.config.verbatim }),
        options.finalize?.spool,
      ),
    });
    if (!cache) return d;
    // The cached list is read in steps (100,000 tools: ~0.5 s read and parsed, then checked and packed),
    // so the gateway serves meanwhile; a shared store's, once its snapshot is loaded.
    this.#cacheReads.set(d, () => {
      if (this.#closed) return;
      const instructions = cache.loadInstructions &&
        this.#cacheOp(() => cache.loadInstructions!(server.name, fingerprint));
      if (instructions && !this.#instructions.has(server.name) && d.state !== "connected") {
        this.#instructions.set(server.name, instructions);
      }
      const list = cache.loadAsync
        ? this.#cacheOp(() => cache.loadAsync!(server.name, fingerprint))
        : Promise.resolve().then(() => this.#cacheOp(() => cache.load(server.name, fingerprint)));
      d.useCachedTools(
        (list ?? Promise.resolve(undefined)).catch((error) =>
          this.#cacheOp(() => {
            throw error;
          })
        ),
      );
    });
    if (this.#storeDone) this.#readCache(d);
    return d;
  }

  /**
   * Applies a new config (a reload): servers whose entry changed in what starts them are reconnected,
   * removed ones (and ones that left the agent's scope) stopped, added ones started; the others keep
   * their sessions, processes and in-flight calls (a change of description, tags or hints only is
   * applied in place). Top-level settings apply from the next request. Resolves once the stopped
   * servers' processes have exited; returns at once what changed.
   *
   * @throws {RangeError} when `--agent` is not defined in `next` (nothing is changed then)
   */
  reconfigure(next: Config): { summary: ReloadSummary; done: Promise<void> } {
    const scope = this.#scopeOf(next);
    const summary: ReloadSummary = { added: [], changed: [], removed: [], kept: [] };
    if (this.#closed) return { summary, done: Promise.resolve() };
    const wanted = this.#inScope(next);
    const old = this.#downstreams;
    const fresh = new Map<string, Downstream>();
    const stopping: Downstream[] = [];
    const starting: Downstream[] = [];
    for (const server of wanted) {
      const current = old.get(server.name);
      if (current && startIdentity(current.config) === startIdentity(server)) {
        current.config = server;
        fresh.set(server.name, current);
        summary.kept.push(server.name);
        continue;
      }
      if (current) stopping.push(current);
      const d = this.#newDownstream(server, next);
      fresh.set(server.name, d);
      starting.push(d);
      (current ? summary.changed : summary.added).push(server.name);
    }
    for (const [name, d] of old) {
      if (fresh.has(name)) continue;
      stopping.push(d);
      summary.removed.push(name);
    }
    this.#config = next;
    this.#scope = scope;
    this.#toolAllow = scope?.tools ? new Set(scope.tools) : undefined;
    this.#configError = undefined;
    this.#downstreams = fresh;
    for (const view of this.#views) view.#rebase(next);
    this.#changed();
    const stopped = Promise.allSettled(stopping.map((d) => d.close()));
    if (this.#running) { for (const d of starting) d.connect(); }
    return { summary, done: stopped.then(() => {}) };
  }

  /** Reads or writes the tool cache; a failure is logged once and never stops the gateway. */
  /**
   * Saves a server's listed tools in the cache. A large list (1,000 tools or more) is serialized and
   * hashed in slices first (100,000 tools take ~0.3 s to serialize), so that an unchanged list costs the
   * store no compare; a later list of the same server replaces one still being serialized, and closing
   * the hub finishes what is pending.
   */
  #cacheSave(
    cache: ToolListCache,
    server: string,
    fingerprint: string,
    tools: readonly ToolDefinition[],
  ): void {
    this.#cacheSaves.delete(server);
    if (tools.length < SLICED_STRINGIFY_MIN_ITEMS) {
      this.#cacheWritten(this.#cacheOp(() => cache.save(server, fingerprint, tools)));
      return;
    }
    const text = new Stepper(cacheTextSteps(tools));
    const save = () => {
      if (this.#cacheSaves.get(server) !== save) return;
      this.#cacheSaves.delete(server);
      const { json, hash } = text.finish();
      this.#cacheWritten(this.#cacheOp(() => cache.save(server, fingerprint, tools, json, hash)));
    };
    this.#cacheSaves.set(server, save);
    text.finishAsync().then(save, () => this.#cacheSaves.delete(server));
  }

  /** Cache saves waiting for their list's text, by server: each finishes the save at once. */
  #cacheSaves = new Map<string, () => void>();

  /** A save the cache writes in steps: its failure is reported as a failure of the cache at once would be. */
  #cacheWritten(written: void | Promise<void> | undefined): void {
    written?.catch((error) =>
      this.#cacheOp(() => {
        throw error;
      })
    );
  }

  #cacheOp<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      if (!this.#cacheWarned) {
        this.#cacheWarned = true;
        this.#options.log(`warning: the tool-list cache is not available: ${messageOf(error)}`);
      }
      return undefined;
    }
  }

  /**
   * Installs what each new downstream session declares and handles (client capabilities,
   * server-to-client requests, notifications): set before {@linkcode Hub.start}.
   */
  configureSessions(hook: (server: string, client: Client) => void): void {
    // A view's sessions are its base's.
    if (this.#options.base) this.#options.base.configureSessions(hook);
    else this.#onClient = hook;
  }

  /** A server's own `instructions`: from its live session, else from the cache; undefined = none known. */
  instructions(server: string): string | undefined {
    if (this.#options.base) {
      return this.#downstreams.has(server) ? this.#options.base.instructions(server) : undefined;
    }
    return this.#instructions.get(server);
  }

  /** Starts connecting every enabled server concurrently; resolves when all attempts have finished. */
  start(): Promise<void> {
    if (this.#options.base) {
      // A view: its base connects; it only follows the base's changes.
      this.#detach ??= this.#options.base.onChange(() => this.#changed());
      this.#running = true;
      this.#started.resolve();
      return Promise.resolve();
    }
    if (this.#options.storeReady) {
      // A shared store's pins and cache are read first (bounded by its connect timeout; failure = fail open).
      return this.#storeRead.then(() => this.#closed ? undefined : this.#connectAll());
    }
    return this.#connectAll();
  }

  #connectAll(): Promise<void> {
    // Each downstream reports its own state changes (onStateChange), so nothing to announce here.
    const attempts = [...this.#downstreams.values()].map((d) => d.connect());
    this.#running = true;
    this.#started.resolve();
    return Promise.all(attempts).then(() => {});
  }

  /**
   * Resolves once the catalog is complete enough to answer `tools/list` and discovery: the cached lists
   * are read (in slices, after a shared store's snapshots), and every server whose tools are not known
   * yet (no usable cache) has connected or failed, or `startup_wait` has passed since start.
   */
  settled(): Promise<void> {
    this.#startup ??= this.#started.promise.then(async () => {
      // Cached lists still being read are the first answer's (whatever startup_wait says, as when read at once).
      await this.#cachedLists();
      const wait = this.config.startupWaitMs;
      const pending = this.connectingServers().map((name) => this.#downstreams.get(name)!.ready);
      if (wait <= 0 || pending.length === 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(pending),
        new Promise((resolve) => timer = setTimeout(resolve, wait)),
      ]);
      clearTimeout(timer);
    });
    return this.#startup;
  }

  /** Servers still connecting whose tools are not in the catalog yet (no cached list), in config order. */
  connectingServers(): string[] {
    return [...this.#downstreams.values()]
      .filter((d) => d.state === "connecting" && !d.toolsFromCache)
      .map((d) => d.name);
  }

  /** Calls `listener` whenever the catalog may have changed. Returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    this.#catalog = undefined;
    this.#catalogSteps = undefined;
    this.#dropDiscovery();
    if (this.#closed) return;
    for (const listener of this.#listeners) listener();
  }

  get downstreams(): readonly Downstream[] {
    return [...this.#downstreams.values()];
  }

  downstream(name: string): Downstream | undefined {
    return this.#downstreams.get(name);
  }

  /** The catalog now: finishes a sliced build in progress at once (holding the event loop for the rest). */
  #build(): { tools: CatalogTool[]; index: CatalogIndex } {
    if (!this.#catalog) {
      this.#catalogSteps ??= new Stepper(this.#catalogBuild());
      this.#catalog = this.#catalogSteps.finish();
      this.#catalogSteps = undefined;
    }
    return this.#catalog;
  }

  /** The catalog, built in slices that yield to the event loop (100,000 tools take about 0.4 s). */
  async #catalogAsync(): Promise<{ tools: CatalogTool[]; index: CatalogIndex }> {
    // Cached lists still being read at start are part of it (list_servers, discovery).
    if (this.downstreams.some((d) => d.cacheLoading)) await this.#cachedLists();
    if (this.#catalog) return this.#catalog;
    // The build's slices begin once the index worker (if it is started for this build) is made.
    const steps = this.#catalogSteps ??= new Stepper(this.#catalogBuild()).after(
      this.#warmWorker(this.#listedTools()),
    );
    const built = await steps.finishAsync();
    // Kept unless the catalog changed meanwhile (then the caller answers from the one it asked about).
    if (this.#catalogSteps === steps) {
      this.#catalog = built;
      this.#catalogSteps = undefined;
      this.#warmWorker(built.tools.length);
    }
    return built;
  }

  /** How many tools the next catalog may hold at most: the servers' listed tools (cut to `tools:` if set). */
  #listedTools(): number {
    let listed = 0;
    for (const d of this.#downstreams.values()) listed += d.tools.length;
    return this.#toolAllow ? Math.min(listed, this.#toolAllow.size) : listed;
  }

  /**
   * Once a catalog is large enough to be indexed in a worker (as its build begins, and again once it is
   * built), starts that worker in a macrotask of its own, so that it starts (and loads the resolver)
   * while the catalog is built in slices and no build or search waits while Deno makes its isolate.
   * Never at start-up: a small catalog never starts one. Settles a macrotask after the worker is made
   * (see `IndexWorkerPool.warmSoon`); undefined when no worker is started.
   */
  #warmWorker(tools: number): Promise<void> | undefined {
    const threshold = this.#options.indexWorkerMinTools ?? INDEX_WORKER_MIN_TOOLS;
    if (tools < threshold || this.#workerFailed || this.#closed) return undefined;
    return (this.#workers ??= new IndexWorkerPool()).warmSoon();
  }

  *#catalogBuild(): Generator<void, { tools: CatalogTool[]; index: CatalogIndex }> {
    const servers: PackedCatalogServer[] = [];
    for (const d of this.#downstreams.values()) {
      // Connected servers' live tools, and the cached tools of a server in its first attempt.
      if (d.tools.length === 0) continue;
      const memo = this.#verdicts.get(d.name);
      const mounted = memo && memo.tools === d.tools
        ? memo.verdict.mounted
        : (yield* this.#verdictRun(d).steps()).mounted;
      servers.push({
        name: d.name,
        description: d.config.description,
        tags: d.config.tags,
        useWhen: d.config.useWhen,
        toolUseWhen: d.config.toolUseWhen,
        namespace: d.config.namespace,
        tools: mounted,
      });
      yield;
    }
    const allow = this.#toolAllow;
    let tools = this.#withoutCollisions(yield* catalogSteps(servers));
    if (allow) {
      tools = tools.filter((t) => !allow || allow.has(t.namespaced) || allow.has(`${t.server}__${t.tool}`));
      yield;
    }
    return { tools, index: yield* CatalogIndex.build(tools) };
  }

  /** The catalog, built in slices; then the sync accessors answer from it without building. */
  catalogAsync(): Promise<readonly CatalogTool[]> {
    return this.#catalogAsync().then((c) => c.tools);
  }

  /**
   * Tools of `namespace: false` servers whose names collide with a meta-tool or another server's
   * public name are not published; the server's `error` (list_servers) and the log name both.
   */
  #withoutCollisions(tools: CatalogTool[]): CatalogTool[] {
    const bare = new Set(this.downstreams.filter((d) => d.config.namespace === false).map((d) => d.name));
    this.#collisions.clear();
    if (!bare.size) return tools;
    const byName = new Map<string, CatalogTool[]>();
    for (const t of tools) byName.set(t.namespaced, [...byName.get(t.namespaced) ?? [], t]);
    const dropped = new Set<CatalogTool>();
    const clashes = new Map<string, string[]>();
    for (const [name, entries] of byName) {
      const unprefixed = entries.filter((t) => bare.has(t.server));
      const meta = (META_TOOL_NAMES as readonly string[]).includes(name);
      if (!unprefixed.length || (!meta && entries.length < 2)) continue;
      for (const t of unprefixed) {
        dropped.add(t);
        const others = entries.filter((o) => o !== t).map((o) => `server "${o.server}"`);
        const with_ = [...(meta ? ["mcphub's meta-tool"] : []), ...others].join(", ");
        clashes.set(t.server, [...clashes.get(t.server) ?? [], `"${name}" (with ${with_})`]);
      }
    }
    for (const [server, names] of clashes) {
      const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? `, and ${names.length - 5} more` : "");
      const message = `server "${server}" (namespace: false): ${names.length} tool name${
        names.length === 1 ? "" : "s"
      } collide and are not published: ${shown}; remove servers.${server}.namespace or rename the other`;
      this.#collisions.set(server, message);
      if (!this.#collisionsLogged.has(message)) {
        this.#collisionsLogged.add(message);
        this.#options.log(message);
      }
    }
    return tools.filter((t) => !dropped.has(t));
  }

  /**
   * The search index and content-addressed revision of the current catalog; built once per catalog
   * (the catalog in slices; a small catalog's index in slices in process, a large one's in a worker)
   * and shared by every caller that asks while it is built.
   */
  discovery(): Promise<Discovery> {
    if (!this.#discovery) {
      const abort = new AbortController();
      const built: Promise<Discovery> = this.#catalogAsync()
        .then(({ tools }) =>
          this.#index(tools, abort.signal, () => {
            if (this.#discovery === built) this.#dropDiscovery();
          })
        )
        .catch((error) => {
          // Replaced by a newer catalog mid-build: answer from that one.
          if (abort.signal.aborted && !this.#closed) return this.discovery();
          throw error;
        });
      this.#discovery = built;
      this.#discoveryAbort = abort;
      // A catalog change during the build makes a new one; a failed build is not kept.
      built.catch(() => {
        if (this.#discovery === built) this.#discovery = undefined;
      });
    }
    return this.#discovery;
  }

  /** Forgets the current discovery index and frees it (its worker is terminated, even mid-build). */
  #dropDiscovery(): void {
    this.#discovery = undefined;
    this.#discoveryAbort?.abort();
    this.#discoveryAbort = undefined;
  }

  async #index(
    tools: readonly CatalogTool[],
    signal: AbortSignal,
    onFailure: () => void,
  ): Promise<Discovery> {
    const threshold = this.#options.indexWorkerMinTools ?? INDEX_WORKER_MIN_TOOLS;
    if (tools.length >= threshold && !this.#workerFailed && !this.#closed) {
      try {
        return await workerDiscovery(tools, {
          signal,
          pool: this.#workers ??= new IndexWorkerPool(),
          onFailure: (message) => {
            this.#workerFailed = true;
            this.#options.log(`warning: ${message}; the next search indexes in process`);
            onFailure();
          },
        });
      } catch (error) {
        if (signal.aborted) throw error;
        this.#workerFailed = true;
        this.#options.log(`warning: ${messageOf(error)}; indexing ${tools.length} tools in process`);
      }
    }
    return await localDiscovery(tools, { signal });
  }

  /**
   * The pin verdict for a server's current tools (recomputed when its list changes), at once: finishes a
   * sliced check in progress for the same list (holding the event loop for the rest of it).
   */
  #verdict(d: Downstream): PackedVerdict {
    const memo = this.#verdicts.get(d.name);
    if (memo && memo.tools === d.tools) return memo.verdict;
    return this.#verdictRun(d).finish();
  }

  /** The one check of a server's current tools, shared by the sliced catalog build and {@link #verdict}. */
  #verdictRun(d: Downstream): Stepper<PackedVerdict> {
    const run = this.#verdictRuns.get(d.name);
    if (run && run.tools === d.tools) return run.steps;
    const steps = new Stepper(this.#verdictSteps(d, d.tools));
    this.#verdictRuns.set(d.name, { tools: d.tools, steps });
    return steps;
  }

  /** The pin check of one tool list, stepwise (a 100,000-tool list is hashed and written in slices). */
  *#verdictSteps(d: Downstream, tools: readonly PackedTool[]): Generator<void, PackedVerdict> {
    const pins = this.#options.pins;
    if (!pins) return { mounted: [...tools], held: [] };
    const memo = this.#verdicts.get(d.name);
    if (memo && memo.tools === tools) return memo.verdict;
    let verdict: PackedVerdict;
    try {
      verdict = yield* checkPacked(pins, d.name, d.config.trust ?? "changes", tools);
    } catch (error) {
      // The store is unavailable: nothing can be compared, so changed tools cannot be told apart.
      this.#cacheOp(() => {
        throw error;
      });
      verdict = { mounted: [...tools], held: [] };
    } finally {
      if (this.#verdictRuns.get(d.name)?.tools === tools) this.#verdictRuns.delete(d.name);
    }
    for (const h of verdict.held) {
      if (!memo?.verdict.held.some((m) => m.tool === h.tool && m.since === h.since)) {
        this.#options.log(`server "${d.name}": ${heldMessage(h)}`);
      }
    }
    this.#verdicts.set(d.name, { tools, verdict });
    this.#watchApprovals();
    return verdict;
  }

  /**
   * Looks for approvals (`mcphub approve` in another process) every 2 s: one timer for the hub's life
   * once a verdict was taken, re-reading only the servers that have held tools (a no-op otherwise).
   */
  #watchApprovals(): void {
    if (this.#pinTimer !== undefined || this.#closed) return;
    let busy = false;
    this.#pinTimer = setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        // A shared store is re-read first (approvals made on another replica), only while tools are held.
        const pins = this.#options.pins;
        if (pins?.refresh && [...this.#verdicts.values()].some((m) => m.verdict.held.length > 0)) {
          await pins.refresh();
        }
        if (!this.#closed) await new Stepper(this.#recheckSteps()).finishAsync();
      } catch (error) {
        this.#options.log(`warning: checking tool approvals failed: ${messageOf(error)}`);
      } finally {
        busy = false;
      }
    }, 2000);
    Deno.unrefTimer(this.#pinTimer);
  }

  /**
   * Re-reads the pins of the held tools (only those: a server listing 100,000 tools is not hashed again
   * every 2 s because one of them is held); announces a change when one was approved.
   */
  recheckPins(): void {
    new Stepper(this.#recheckSteps()).finish();
  }

  /** {@link Hub.recheckPins} stepwise: the timer takes it in slices (under `trust: pin`, all 100,000 tools may be held). */
  *#recheckSteps(): Generator<void, void> {
    const pins = this.#options.pins;
    if (!pins) return;
    let changed = false;
    // A snapshot: entries are replaced while iterating.
    for (const [name, memo] of [...this.#verdicts]) {
      if (memo.verdict.held.length === 0) continue;
      const d = this.#downstreams.get(name);
      if (!d || d.tools !== memo.tools) {
        // Gone, or listed anew since (which announced a change): the next catalog build takes a whole verdict.
        if (this.#verdicts.get(name) === memo) this.#verdicts.delete(name);
        continue;
      }
      const held = new Set(memo.verdict.held.map((h) => h.tool));
      const trust = d.config.trust ?? "changes";
      const tools = d.tools.filter((t) => held.has(t.name));
      let again: PackedVerdict;
      try {
        again = yield* checkPacked(pins, name, trust, tools);
      } catch (error) {
        this.#cacheOp(() => {
          throw error;
        });
        continue;
      }
      // Replaced meanwhile (a new list, a catalog build): that verdict is newer than this one.
      if (this.#closed || this.#verdicts.get(name) !== memo) continue;
      if (again.held.length === held.size && again.held.every((h) => held.has(h.tool))) continue;
      this.#verdicts.set(name, {
        tools: memo.tools,
        verdict: { mounted: [...memo.verdict.mounted, ...again.mounted], held: again.held },
      });
      changed = true;
    }
    if (changed) this.#changed();
  }

  /** Held tools in scope, by server (for search, resolve and list_servers). */
  held(): HeldTool[] {
    const allow = this.#toolAllow;
    const out: HeldTool[] = [];
    for (const d of this.#downstreams.values()) {
      if (d.tools.length === 0) continue;
      for (const h of this.#verdict(d).held) {
        if (!allow || heldNames(h).some((n) => allow.has(n))) out.push(h);
      }
    }
    return out;
  }

  /** The held tool a reference means, if any. */
  #heldFor(ref: NameReference): HeldTool | undefined {
    const name = ref.server ? `${ref.server}__${ref.tool}` : ref.tool;
    return this.held().find((h) => heldNames(h).includes(name));
  }

  /** The connected catalog, sorted by public name. */
  catalog(): readonly CatalogTool[] {
    return this.#build().tools;
  }

  /**
   * Finds the tool a caller means. A reference to a server that is still
   * connecting waits for it (bounded by connect_timeout).
   */
  async find(ref: NameReference): Promise<CatalogTool | undefined> {
    const found = (await this.#catalogAsync()).index.find(ref);
    if (found) return found;
    await this.settled();
    const settled = (await this.#catalogAsync()).index.find(ref);
    if (settled) return settled;
    const serverName = ref.server ??
      (ref.tool.includes("__") ? ref.tool.slice(0, ref.tool.indexOf("__")) : undefined);
    const d = serverName ? this.#downstreams.get(serverName) : undefined;
    // A server waiting for a login reconnects at once when one was stored meanwhile.
    if (d && (d.state === "connecting" || d.pickUpLogin())) {
      await d.ready;
      return (await this.#catalogAsync()).index.find(ref);
    }
    return undefined;
  }

  /** Tools in scope whose downstream or short name is exactly `name` (a bare name), across servers. */
  async bare(name: string): Promise<CatalogTool[]> {
    await this.settled();
    return (await this.#catalogAsync()).tools.filter((t) => t.tool === name || t.short === name);
  }

  /** True when the agent scope covers this server's downstream tool (stored results are re-checked with it). */
  inScope(server: string, tool: string): boolean {
    if (!this.#downstreams.has(server)) return false;
    const allow = this.#toolAllow;
    if (!allow) return true;
    if (allow.has(`${server}__${tool}`)) return true;
    const entry = this.#build().tools.find((t) => t.server === server && t.tool === tool);
    return entry !== undefined && allow.has(entry.namespaced);
  }

  /** Why a reference cannot be served now, when it names a configured server that is not connected. */
  unavailable(ref: NameReference): string | undefined {
    const held = this.#heldFor(ref);
    if (held) return heldMessage(held);
    const serverName = ref.server ??
      (ref.tool.includes("__") ? ref.tool.slice(0, ref.tool.indexOf("__")) : undefined);
    const d = serverName ? this.#downstreams.get(serverName) : undefined;
    if (!d || d.state === "connected") return undefined;
    return d.unavailableReason();
  }

  /** Public names closest to `name`, for "did you mean" (bounded: a hostile name cannot stall it). */
  closest(name: string): string[] {
    return this.#build().index.closest(name);
  }

  /** Every server with its state, in config order. */
  servers(): ServerStatus[] {
    const allow = this.#toolAllow;
    const catalog = allow ? this.#build().tools : undefined;
    return [...this.#downstreams.values()].map((d) => {
      const c = d.config;
      const verdict = this.#verdict(d);
      const status: ServerStatus = {
        name: c.name,
        enabled: c.enabled,
        connected: d.state === "connected",
        state: d.state,
        // Under a tool allowlist, only the tools in scope are counted.
        tools: catalog ? catalog.filter((t) => t.server === d.name).length : verdict.mounted.length,
        kind: c.url ? c.transport : "stdio",
        target: d.redact(c.url ? redactUrl(c.url) : [c.command!, ...c.args].join(" ")),
      };
      if (c.description) status.description = c.description;
      if (c.tags.length) status.tags = c.tags;
      if (c.useWhen.length) status.use_when = c.useWhen;
      if (d.error) status.error = d.error;
      else if (this.#build() && this.#collisions.has(c.name)) {
        status.error = this.#collisions.get(c.name)!;
      }
      if (d.nextAttemptAt !== undefined) status.next_attempt_at = new Date(d.nextAttemptAt).toISOString();
      if (d.failures > 0) status.failures = d.failures;
      if (d.loginCommand) status.login_command = d.loginCommand;
      if (!allow) {
        if (d.rejected.length) status.rejected = [...d.rejected];
        if (verdict.held.length) {
          status.held = verdict.held.map((h) => ({
            tool: h.tool,
            status: h.status,
            fields: h.fields,
            since: new Date(h.since).toISOString(),
            approve: `mcphub approve ${h.server}__${h.tool}`,
          }));
        }
        const flagged = verdict.mounted.map((t) => ({ tool: t.name, markers: toolMarkers(unpackTool(t)) }))
          .filter((f) => f.markers.length > 0);
        if (flagged.length) status.flagged = flagged;
      }
      return status;
    });
  }

  /**
   * Calls a catalog tool through the one result path: call, time, finalize
   * (spool an oversized result), record. Downstream `isError` results pass
   * through unchanged; a JSON-RPC error from the server is rethrown as is.
   */
  call(entry: CatalogTool, args: Record<string, unknown>, options: HubCallOptions & { raw: true }): Promise<
    CallToolResult | RawResult
  >;
  call(entry: CatalogTool, args: Record<string, unknown>, options: HubCallOptions): Promise<CallToolResult>;
  async call(
    entry: CatalogTool,
    args: Record<string, unknown>,
    options: HubCallOptions,
  ): Promise<CallToolResult | RawResult> {
    const d = this.#downstreams.get(entry.server);
    if (!d) throw new Error(`server "${entry.server}" is not configured`);
    const limit = this.config.callTimeoutMs;
    const timeoutMs = options.timeoutMs !== undefined ? Math.min(options.timeoutMs, limit) : limit;
    const limitName = options.timeoutMs !== undefined && options.timeoutMs < limit
      ? "timeout_ms"
      : "call_timeout";
    const started = Date.now();
    const t0 = performance.now();
    const argsBytes = byteLength(JSON.stringify(args));
    if (d.toolsFromCache) {
      // Listed from the cache: once the server is up, the tool must still be among its live tools.
      await d.ready;
      if (d.state === "connected" && !d.tools.some((t) => t.name === entry.tool)) {
        throw new ProtocolError(
          -32602,
          `Tool "${entry.namespaced}" is no longer offered by server "${entry.server}" (it was in its last ` +
            "known tool list). Call list_servers or search_tools to see the available tools.",
        );
      }
    }
    let result: CallToolResult | RawResult;
    let transportError: string | undefined;
    try {
      result = await d.callTool(entry.tool, args, {
        signal: options.signal,
        timeoutMs,
        onProgress: options.onProgress,
        raw: options.raw,
      });
    } catch (error) {
      if (error instanceof ServerUnavailableError) {
        return errorResult(`${error.message}. Call list_servers for the state of every server.`);
      }
      if (error instanceof OutcomeUnknownError) {
        transportError = error.message;
        result = errorResult(
          `Outcome unknown: the connection to server "${entry.server}" broke during the call to ${entry.namespaced} ` +
            `(${error.message}). The request was not retried, because it may already have taken effect; ` +
            (this.#downstreams.get(entry.server) === d
              ? `the connection is being restored for future calls.`
              : `a reload of the config stopped or reconnected the server meanwhile.`),
        );
      } else if (error instanceof CallTimeoutError) {
        transportError = `timed out after ${timeoutMs}ms`;
        result = errorResult(
          `The call to ${entry.namespaced} timed out after ${timeoutMs}ms (${limitName} = ${timeoutMs}ms) and was ` +
            `cancelled downstream; its outcome is unknown and it was not retried.`,
        );
      } else {
        this.#record(entry, options.via, started, t0, false, messageOf(error), argsBytes, 0, 0, false);
        throw asProtocolError(error);
      }
    }
    // Resource links and embedded resources point through the gateway (mcphub://SERVER/...); a
    // `namespace: false` server's stay as they are, unless they claim mcphub:// (then under its name).
    {
      const bare = d.config.namespace === false;
      if (!(result instanceof RawResult)) result = namespaceResultUris(entry.server, result, { bare });
      else if (result.mayHaveResources()) {
        const parsed = result.parse() as unknown as CallToolResult;
        const renamed = namespaceResultUris(entry.server, parsed, { bare });
        if (renamed !== parsed) {
          // Stored from here on as parsed: what was spilled as it arrived goes.
          result.raw.discardSpill();
          result = renamed;
        }
      }
    }
    const finalizeOptions: FinalizeOptions = {
      ...this.#options.finalize,
      budget: this.config.responseBudget,
      verbatim: this.config.verbatim,
      server: entry.server,
      tool: entry.tool,
      namespaced: entry.namespaced,
      agent: this.agent,
    };
    const finalized = result instanceof RawResult
      ? await finalizeRawResult(result, finalizeOptions)
      : await finalizeResult(result, finalizeOptions);
    const isError = result.isError === true;
    this.#record(
      entry,
      options.via,
      started,
      t0,
      !isError,
      transportError ?? (isError ? firstText(result) : undefined),
      argsBytes,
      finalized.originalBytes,
      finalized.returnedBytes,
      finalized.spooled,
    );
    return finalized.result;
  }

  /**
   * A non-tool result (`resources/read`) through the same budget as tool results: over it, stored
   * whole and answered with a receipt (paged with get_result, re-checked against scope as `tool`).
   */
  finalizeOther(result: Record<string, unknown>, meta: { server: string; tool: string; namespaced: string }) {
    return finalizeResult(result as CallToolResult, {
      ...this.#options.finalize,
      budget: this.config.responseBudget,
      verbatim: this.config.verbatim,
      ...meta,
      agent: this.agent,
    });
  }

  #record(
    entry: CatalogTool,
    via: CallVia,
    started: number,
    t0: number,
    ok: boolean,
    error: string | undefined,
    argsBytes: number,
    resultBytes: number,
    returnedBytes: number,
    spooled: boolean,
  ): void {
    // Redact, then cut: whatever stores or shows the error cuts it, so it must hold no secret first.
    if (error !== undefined) error = this.#downstreams.get(entry.server)?.redact(error) ?? error;
    try {
      this.#options.onCall?.({
        ts: started,
        server: entry.server,
        tool: entry.tool,
        namespaced: entry.namespaced,
        durationMs: Math.round(performance.now() - t0),
        ok,
        error,
        argsBytes,
        resultBytes,
        returnedBytes,
        spooled,
        agent: this.agent,
        via,
      });
    } catch (error) {
      this.#options.log(`recording a call failed: ${messageOf(error)}`);
    }
  }

  /** Closes every session and stops every child process, concurrently. */
  async close(): Promise<void> {
    this.#closed = true;
    // Lists still being serialized for the cache are saved now (the owner closes the store next).
    for (const save of [...this.#cacheSaves.values()]) save();
    // And the writes under way finished (a large list is written in steps): the list they switch to is whole.
    if (!this.#options.base) this.#cacheOp(() => this.#options.toolCache?.finishWrites?.());
    this.#dropDiscovery();
    this.#workers?.close();
    clearInterval(this.#pinTimer);
    this.#pinTimer = undefined;
    this.#detach?.();
    if (this.#options.base) {
      this.#options.base.#views.delete(this);
      return;
    }
    this.#log.flush();
    await Promise.allSettled([...this.#downstreams.values()].map((d) => d.close()));
  }
}

/** A `PinVerdict` (pinning.ts) over packed tools: the mounted ones are the packed tools checked. */
interface PackedVerdict {
  mounted: PackedTool[];
  held: HeldTool[];
}

/**
 * The pin check of packed tools: unpacked stepwise ({@link PIN_CHUNK} a step) for the store's check, which
 * sees the definitions as listed; the mounted tools stay the packed ones. The unpacked definitions live
 * only as long as the check.
 */
function* checkPacked(
  pins: PinStore,
  server: string,
  trust: Trust,
  tools: readonly PackedTool[],
): Generator<void, PackedVerdict> {
  const defs: ToolDefinition[] = [];
  const packedOf = new Map<ToolDefinition, PackedTool>();
  for (let i = 0; i < tools.length; i++) {
    if (i % PIN_CHUNK === PIN_CHUNK - 1) yield;
    const def = unpackTool(tools[i]!);
    defs.push(def);
    packedOf.set(def, tools[i]!);
  }
  const verdict = pins.checkSteps
    ? yield* pins.checkSteps(server, trust, defs)
    : pins.check(server, trust, defs);
  return { mounted: verdict.mounted.map((def) => packedOf.get(def) ?? packTool(def)), held: verdict.held };
}

/** The public names a held tool would have: `server__tool`, and without a `server_` self-prefix. */
function heldNames(h: HeldTool): string[] {
  const names = [`${h.server}__${h.tool}`];
  for (const sep of ["_", "-", "__"]) {
    if (h.tool.startsWith(`${h.server}${sep}`)) {
      names.push(`${h.server}__${h.tool.slice(h.server.length + sep.length)}`);
    }
  }
  return names;
}

/** An `isError` tool result with one text block. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** Units of a relayed error result's first text kept for its record. */
const RAW_ERROR_TEXT_UNITS = 64 * 1024;

function firstText(result: CallToolResult | RawResult): string | undefined {
  const content = result instanceof RawResult ? result.preview(RAW_ERROR_TEXT_UNITS).content : result.content;
  for (const block of content ?? []) {
    if (block.type === "text") return block.text;
  }
  return undefined;
}

/**
 * A downstream JSON-RPC error as the gateway's own error with the same code, message and data: the
 * SDK's McpError carries an "MCP error N: " prefix in its message, which the host's client would double.
 */
function asProtocolError(error: unknown): unknown {
  if (!(error instanceof McpError)) return error;
  // Servers built on the SDK put the prefix into the message on the wire too: strip every repeat.
  const message = error.message.replace(/^(MCP error -?\d+: )+/, "");
  return new ProtocolError(error.code, message, { cause: error }, error.data);
}

/** A URL without credentials or query (which may carry tokens). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = u.search ? "?…" : "";
    return u.toString();
  } catch {
    return "<invalid url>";
  }
}
