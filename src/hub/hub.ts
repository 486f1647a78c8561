/**
 * The hub: every configured downstream, the catalog built from what they list (with its pin verdicts
 * and discovery index: hub_catalog.ts), name lookup and scope, and the entry to the one call path
 * (call_path.ts).
 *
 * @module
 */
import type { AgentConfig, Config, ServerConfig } from "../config/mod.ts";
import type { CallRecord as CallEvent, CallVia } from "../intelligence/mod.ts";
import type { CatalogTool } from "../catalog/mod.ts";
import { listHashSteps, serverFingerprint, type ToolListCache } from "../catalog/tool_cache.ts";
import { messageOf } from "../mcp/errors.ts";
import type { Client } from "../mcp/sdk.ts";
import { Downstream, type RestartPolicy } from "../downstream/downstream.ts";
import type { NameReference } from "../catalog/mod.ts";
import type { CallToolResult } from "../mcp/sdk.ts";
import { type FinalizeOptions, spillPolicy } from "./finalize.ts";
import { type CallPath, callThrough, finalizeOther, type HubCallOptions, record } from "./call_path.ts";
import { RawResult } from "../json/raw_json.ts";
import type { Discovery } from "../resolver/index_host.ts";
import { HubCatalog } from "./hub_catalog.ts";
import { Stepper } from "../json/slices.ts";
import { jsonTextSteps, SLICED_STRINGIFY_MIN_ITEMS } from "../json/sliced_json.ts";
import { agentServers } from "../config/light.ts";
import { serverEnvironment } from "../downstream/environment.ts";
import { rateLimitedLog } from "./log_limit.ts";
import { heldMessage, type HeldTool, type PinStore } from "../trust/pinning.ts";
import { PinVerdicts } from "../trust/verdicts.ts";
import { type InjectionMarker, toolMarkers } from "../trust/injection.ts";
import type { RejectedTool } from "../trust/limits.ts";
import { type ToolDefinition, unpackTool } from "../catalog/mod.ts";
import { type AuthStore, serverAuth } from "../auth/light.ts";
import type { Telemetry, WireTrace } from "../telemetry/mod.ts";

/** How a call reached the hub, and the record of one finished call: the intelligence module's shapes. */
export type { CallRecord as CallEvent, CallVia } from "../intelligence/mod.ts";
export { errorResult, type HubCallOptions } from "./call_path.ts";

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
   * @default `INDEX_WORKER_MIN_TOOLS` (index_host.ts)
   */
  indexWorkerMinTools?: number;
  /** Spans and durations of downstream calls, and servers' state changes; undefined = none. */
  telemetry?: Telemetry;
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
  /** The catalog built from what the servers list, and its discovery index (see hub_catalog.ts). */
  #catalog: HubCatalog;
  /** Pin verdicts per server, and the watch for approvals made elsewhere. */
  #verdicts: PinVerdicts;
  #log: { log: (line: string) => void; flush: () => void };
  #listeners = new Set<() => void>();
  #closed = false;
  #running = false;
  #started = Promise.withResolvers<void>();
  #startup?: Promise<void>;
  #cacheWarned = false;
  #onClient?: (server: string, client: Client) => void;
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
    this.#catalog = new HubCatalog({
      downstreams: () => this.#downstreams.values(),
      toolAllow: () => this.#toolAllow,
      verdicts: () => this.#verdicts,
      cachedLists: () => this.#cachedLists(),
      closed: () => this.#closed,
      log: (line) => this.#options.log(line),
      indexWorkerMinTools: options.indexWorkerMinTools,
    });
    this.#verdicts = new PinVerdicts({
      pins: options.pins,
      log: (line) => this.#options.log(line),
      server: (name) => this.#downstreams.get(name),
      storeFailed: (error) =>
        this.#cacheOp(() => {
          throw error;
        }),
      changed: () => this.#changed(),
    });
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

  /** Code mode (run_code) is on: at the top level, or for this agent. */
  get codeMode(): boolean {
    return this.#config.codeMode || this.#scope?.codeMode === true;
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
      if (d) options.telemetry?.serverState(server.name, d.state, d.failures);
      this.#changed();
    };
    const d = new Downstream(server, {
      onToolsListed: cache && ((tools) => this.#cacheSave(cache, server.name, fingerprint, tools)),
      eras: cache?.loadEra && cache.saveEra
        ? {
          load: () => this.#cacheOp(() => cache.loadEra!(fingerprint)),
          save: (era) => void this.#cacheOp(() => cache.saveEra!(fingerprint, era)),
        }
        : undefined,
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
      // Tracing: each connection's own requests (opening, lists, listens) as CLIENT spans.
      wire: options.telemetry?.tracing
        ? (transport: "pipe" | "tcp"): WireTrace | undefined =>
          options.telemetry!.wire(server.name, transport, (text: string): string => d.redact(text))
        : undefined,
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
    this.#catalog.invalidate();
    if (this.#closed) return;
    for (const listener of this.#listeners) listener();
  }

  get downstreams(): readonly Downstream[] {
    return [...this.#downstreams.values()];
  }

  downstream(name: string): Downstream | undefined {
    return this.#downstreams.get(name);
  }

  /** The catalog, built in slices; then the sync accessors answer from it without building. */
  catalogAsync(): Promise<readonly CatalogTool[]> {
    return this.#catalog.catalogAsync().then((c) => c.tools);
  }

  /**
   * The search index and content-addressed revision of the current catalog; built once per catalog
   * (the catalog in slices; a small catalog's index in slices in process, a large one's in a worker)
   * and shared by every caller that asks while it is built.
   */
  discovery(): Promise<Discovery> {
    return this.#catalog.discovery();
  }

  /**
   * Re-reads the pins of the held tools (only those: a server listing 100,000 tools is not hashed again
   * every 2 s because one of them is held); announces a change when one was approved.
   */
  recheckPins(): void {
    this.#verdicts.recheck();
  }

  /** Held tools in scope, by server (for search, resolve and list_servers). */
  held(): HeldTool[] {
    const allow = this.#toolAllow;
    const out: HeldTool[] = [];
    for (const d of this.#downstreams.values()) {
      if (d.tools.length === 0) continue;
      for (const h of this.#verdicts.verdict(d).held) {
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
    return this.#catalog.build().tools;
  }

  /**
   * The catalog in the order the servers list their tools (what `tools/list` answers): servers in
   * config order, each server's tools in its own order; the catalog itself is by public name.
   */
  listedOrder(catalog: readonly CatalogTool[] = this.catalog()): readonly CatalogTool[] {
    return this.#catalog.listedOrder(catalog);
  }

  /**
   * Finds the tool a caller means. A reference to a server that is still
   * connecting waits for it (bounded by connect_timeout).
   */
  async find(ref: NameReference): Promise<CatalogTool | undefined> {
    const found = (await this.#catalog.catalogAsync()).index.find(ref);
    if (found) return found;
    await this.settled();
    const settled = (await this.#catalog.catalogAsync()).index.find(ref);
    if (settled) return settled;
    const serverName = ref.server ??
      (ref.tool.includes("__") ? ref.tool.slice(0, ref.tool.indexOf("__")) : undefined);
    const d = serverName ? this.#downstreams.get(serverName) : undefined;
    // A server waiting for a login reconnects at once when one was stored meanwhile.
    if (d && (d.state === "connecting" || d.pickUpLogin())) {
      await d.ready;
      return (await this.#catalog.catalogAsync()).index.find(ref);
    }
    return undefined;
  }

  /** Tools in scope whose downstream or short name is exactly `name` (a bare name), across servers. */
  async bare(name: string): Promise<CatalogTool[]> {
    await this.settled();
    return (await this.#catalog.catalogAsync()).tools.filter((t) => t.tool === name || t.short === name);
  }

  /** True when the agent scope covers this server's downstream tool (stored results are re-checked with it). */
  inScope(server: string, tool: string): boolean {
    // run_code's own results: readable wherever code mode is on (the spool checks the agent).
    if (server === "mcphub") return tool === "run_code" && this.codeMode;
    if (!this.#downstreams.has(server)) return false;
    const allow = this.#toolAllow;
    if (!allow) return true;
    if (allow.has(`${server}__${tool}`)) return true;
    const entry = this.#catalog.build().tools.find((t) => t.server === server && t.tool === tool);
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
    return this.#catalog.build().index.closest(name);
  }

  /** Every server with its state, in config order. */
  servers(): ServerStatus[] {
    const allow = this.#toolAllow;
    const catalog = allow ? this.#catalog.build().tools : undefined;
    return [...this.#downstreams.values()].map((d) => {
      const c = d.config;
      const verdict = this.#verdicts.verdict(d);
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
      else if (this.#catalog.build() && this.#catalog.collisions.has(c.name)) {
        status.error = this.#catalog.collisions.get(c.name)!;
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
   * Calls a catalog tool through the one result path (call_path.ts): call, time, finalize (spool an
   * oversized result), record. Downstream `isError` results pass through unchanged; a JSON-RPC error from
   * the server is rethrown as is.
   */
  call(entry: CatalogTool, args: Record<string, unknown>, options: HubCallOptions & { raw: true }): Promise<
    CallToolResult | RawResult
  >;
  call(entry: CatalogTool, args: Record<string, unknown>, options: HubCallOptions): Promise<CallToolResult>;
  call(
    entry: CatalogTool,
    args: Record<string, unknown>,
    options: HubCallOptions,
  ): Promise<CallToolResult | RawResult> {
    return callThrough(this.#callPath(), entry, args, options);
  }

  /**
   * A non-tool result (`resources/read`) through the same budget as tool results: over it, stored
   * whole and answered with a receipt (paged with get_result, re-checked against scope as `tool`).
   */
  finalizeOther(result: Record<string, unknown>, meta: { server: string; tool: string; namespaced: string }) {
    return finalizeOther(this.#callPath(), result, meta);
  }

  /** Spans and durations (see telemetry/); undefined = none. */
  get telemetry(): Telemetry | undefined {
    return this.#options.telemetry;
  }

  /** What the call path reads of this hub, at the time of the call. */
  #callPath(): CallPath {
    return {
      downstream: (server) => this.#downstreams.get(server),
      config: this.config,
      agent: this.agent,
      finalize: this.#options.finalize,
      telemetry: this.#options.telemetry,
      onCall: this.#options.onCall,
      log: this.#options.log,
    };
  }

  /**
   * Records a call the gateway served itself (run_code): `server` "mcphub", with the run id its inner
   * calls carry.
   */
  recordOwn(
    tool: string,
    call: { via: CallVia; run: string; started: number; t0: number; ok: boolean; error?: string },
    sizes: { argsBytes: number; resultBytes: number; returnedBytes: number; spooled: boolean },
  ): void {
    // The error may quote any server's tool error: redacted with every server's secrets.
    let error = call.error;
    if (error !== undefined) { for (const d of this.#downstreams.values()) error = d.redact(error); }
    record(
      this.#callPath(),
      { server: "mcphub", tool, namespaced: tool },
      call,
      call.started,
      call.t0,
      call.ok,
      error,
      sizes.argsBytes,
      sizes.resultBytes,
      sizes.returnedBytes,
      sizes.spooled,
    );
  }

  /** Closes every session and stops every child process, concurrently. */
  async close(): Promise<void> {
    this.#closed = true;
    // Lists still being serialized for the cache are saved now (the owner closes the store next).
    for (const save of [...this.#cacheSaves.values()]) save();
    // And the writes under way finished (a large list is written in steps): the list they switch to is whole.
    if (!this.#options.base) this.#cacheOp(() => this.#options.toolCache?.finishWrites?.());
    this.#catalog.close();
    this.#verdicts.close();
    this.#detach?.();
    if (this.#options.base) {
      this.#options.base.#views.delete(this);
      return;
    }
    this.#log.flush();
    await Promise.allSettled([...this.#downstreams.values()].map((d) => d.close()));
  }
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

/** A URL without credentials or query (which may carry tokens). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    // Appended after serialising: URL would percent-encode the "…" (`?%E2%80%A6`).
    const query = u.search ? "?…" : "";
    u.search = "";
    u.hash = "";
    return u.toString() + query;
  } catch {
    return "<invalid url>";
  }
}
