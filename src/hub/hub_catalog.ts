/**
 * The hub's catalog, built from what its servers list: built in slices (after each server's pin
 * verdicts), `namespace: false` collisions left out, cut to the agent's `tools:`, its order as listed,
 * and the discovery index of each catalog (in process, or in a Web Worker for a large one). The
 * hub (hub.ts) owns one and drops it on every change.
 *
 * @module
 */
import { CatalogIndex, catalogSteps, type CatalogTool, type PackedCatalogServer } from "../catalog/mod.ts";
import { messageOf } from "../mcp/errors.ts";
import { META_TOOL_NAMES } from "./meta_tools.ts";
import type { Downstream } from "../downstream/downstream.ts";
import {
  type Discovery,
  INDEX_WORKER_MIN_TOOLS,
  IndexWorkerPool,
  localDiscovery,
  workerDiscovery,
} from "../resolver/index_host.ts";
import { Stepper } from "../json/slices.ts";
import type { PinVerdicts } from "../trust/verdicts.ts";

/** What the catalog reads of its hub, at the time it reads it. */
export interface CatalogHost {
  /** The hub's downstreams now, in config order. */
  downstreams(): Iterable<Downstream>;
  /** The agent's `tools:` allowlist; undefined = every tool. */
  toolAllow(): ReadonlySet<string> | undefined;
  /** The pin verdicts of the hub's servers (what each mounts). */
  verdicts(): PinVerdicts;
  /** Settles once the cached lists of the hub's servers are read (see the hub). Never rejects. */
  cachedLists(): Promise<void>;
  /** The hub is closed. */
  closed(): boolean;
  log(line: string): void;
  /** @default {@link INDEX_WORKER_MIN_TOOLS} */
  indexWorkerMinTools?: number;
}

/** A built catalog: its tools by public name, and their lookup index. */
export interface BuiltCatalog {
  tools: CatalogTool[];
  index: CatalogIndex;
}

/** The current catalog of one hub and its discovery index; built once per change. */
export class HubCatalog {
  #host: CatalogHost;
  #catalog?: BuiltCatalog;
  /** The catalog being built in slices (see #catalogAsync). */
  #catalogSteps?: Stepper<BuiltCatalog>;
  #discovery?: Promise<Discovery>;
  /** Ends the current discovery index: stops its worker's build, or frees the built index. */
  #discoveryAbort?: AbortController;
  /** The index worker failed once: later catalogs are indexed in process. */
  #workerFailed = false;
  /** The index worker, kept from one large catalog's index to the next (started once, see #warmWorker). */
  #workers?: IndexWorkerPool;
  /** `namespace: false` name collisions, per server (see #withoutCollisions). */
  #collisions = new Map<string, string>();
  #collisionsLogged = new Set<string>();
  /** {@link listedOrder} of the last catalogs (a catalog is rebuilt, never changed). */
  #listedOrder = new WeakMap<readonly CatalogTool[], readonly CatalogTool[]>();

  constructor(host: CatalogHost) {
    this.#host = host;
  }

  /** The catalog may have changed: the built one and its discovery index are dropped. */
  invalidate(): void {
    this.#catalog = undefined;
    this.#catalogSteps = undefined;
    this.#dropDiscovery();
  }

  /** Frees the discovery index and stops the index worker (the hub is closing). */
  close(): void {
    this.#dropDiscovery();
    this.#workers?.close();
  }

  /** The collision message of each `namespace: false` server whose names collide in the last catalog built. */
  get collisions(): ReadonlyMap<string, string> {
    return this.#collisions;
  }

  /** The catalog now: finishes a sliced build in progress at once (holding the event loop for the rest). */
  build(): BuiltCatalog {
    if (!this.#catalog) {
      this.#catalogSteps ??= new Stepper(this.#catalogBuild());
      this.#catalog = this.#catalogSteps.finish();
      this.#catalogSteps = undefined;
    }
    return this.#catalog;
  }

  /** The catalog, built in slices that yield to the event loop (100,000 tools take about 0.4 s). */
  async catalogAsync(): Promise<BuiltCatalog> {
    // Cached lists still being read at start are part of it (list_servers, discovery).
    if ([...this.#host.downstreams()].some((d) => d.cacheLoading)) await this.#host.cachedLists();
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
    for (const d of this.#host.downstreams()) listed += d.tools.length;
    const allow = this.#host.toolAllow();
    return allow ? Math.min(listed, allow.size) : listed;
  }

  /**
   * Once a catalog is large enough to be indexed in a worker (as its build begins, and again once it is
   * built), starts that worker in a macrotask of its own, so that it starts (and loads the resolver)
   * while the catalog is built in slices and no build or search waits while Deno makes its isolate.
   * Never at start-up: a small catalog never starts one. Settles a macrotask after the worker is made
   * (see `IndexWorkerPool.warmSoon`); undefined when no worker is started.
   */
  #warmWorker(tools: number): Promise<void> | undefined {
    const threshold = this.#host.indexWorkerMinTools ?? INDEX_WORKER_MIN_TOOLS;
    if (tools < threshold || this.#workerFailed || this.#host.closed()) return undefined;
    return (this.#workers ??= new IndexWorkerPool()).warmSoon();
  }

  *#catalogBuild(): Generator<void, BuiltCatalog> {
    const servers: PackedCatalogServer[] = [];
    for (const d of this.#host.downstreams()) {
      // Connected servers' live tools, and the cached tools of a server in its first attempt.
      if (d.tools.length === 0) continue;
      const mounted = (yield* this.#host.verdicts().steps(d)).mounted;
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
    const allow = this.#host.toolAllow();
    let tools = this.#withoutCollisions(yield* catalogSteps(servers));
    if (allow) {
      tools = tools.filter((t) => !allow || allow.has(t.namespaced) || allow.has(`${t.server}__${t.tool}`));
      yield;
    }
    return { tools, index: yield* CatalogIndex.build(tools) };
  }

  /**
   * Tools of `namespace: false` servers whose names collide with a meta-tool or another server's
   * public name are not published; the server's `error` (list_servers) and the log name both.
   */
  #withoutCollisions(tools: CatalogTool[]): CatalogTool[] {
    const bare = new Set(
      [...this.#host.downstreams()].filter((d) => d.config.namespace === false).map((d) => d.name),
    );
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
        this.#host.log(message);
      }
    }
    return tools.filter((t) => !dropped.has(t));
  }

  /**
   * The catalog in the order the servers list their tools (what `tools/list` answers): servers in
   * config order, each server's tools in its own order; the catalog itself is by public name.
   */
  listedOrder(catalog: readonly CatalogTool[]): readonly CatalogTool[] {
    const known = this.#listedOrder.get(catalog);
    if (known) return known;
    const byServer = new Map<string, Map<string, CatalogTool>>();
    for (const t of catalog) {
      let tools = byServer.get(t.server);
      if (!tools) byServer.set(t.server, tools = new Map());
      tools.set(t.tool, t);
    }
    const out: CatalogTool[] = [];
    for (const d of this.#host.downstreams()) {
      const tools = byServer.get(d.name);
      if (!tools) continue;
      for (const listed of d.tools) {
        const t = tools.get(listed.name);
        if (t) out.push(t), tools.delete(listed.name);
      }
    }
    // Whatever a server's list no longer names (never expected): after them, by name.
    for (const tools of byServer.values()) out.push(...tools.values());
    this.#listedOrder.set(catalog, out);
    return out;
  }

  /**
   * The search index and content-addressed revision of the current catalog; built once per catalog
   * (the catalog in slices; a small catalog's index in slices in process, a large one's in a worker)
   * and shared by every caller that asks while it is built.
   */
  discovery(): Promise<Discovery> {
    if (!this.#discovery) {
      const abort = new AbortController();
      const built: Promise<Discovery> = this.catalogAsync()
        .then(({ tools }) =>
          this.#index(tools, abort.signal, () => {
            if (this.#discovery === built) this.#dropDiscovery();
          })
        )
        .catch((error) => {
          // Replaced by a newer catalog mid-build: answer from that one.
          if (abort.signal.aborted && !this.#host.closed()) return this.discovery();
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
    const threshold = this.#host.indexWorkerMinTools ?? INDEX_WORKER_MIN_TOOLS;
    if (tools.length >= threshold && !this.#workerFailed && !this.#host.closed()) {
      try {
        return await workerDiscovery(tools, {
          signal,
          pool: this.#workers ??= new IndexWorkerPool(),
          onFailure: (message) => {
            this.#workerFailed = true;
            this.#host.log(`warning: ${message}; the next search indexes in process`);
            onFailure();
          },
        });
      } catch (error) {
        if (signal.aborted) throw error;
        this.#workerFailed = true;
        this.#host.log(`warning: ${messageOf(error)}; indexing ${tools.length} tools in process`);
      }
    }
    return await localDiscovery(tools, { signal });
  }
}
