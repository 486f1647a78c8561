/**
 * One downstream MCP server: connecting (stdio here, remote in remote.ts), its tool list, its state and
 * restarts (the policy and errors in failures.ts), its stderr tail (stderr.ts), and calls to it.
 *
 * @module
 */
import type { ServerConfig } from "../config/mod.ts";
import { type PackedTool, packTool, type ToolDefinition } from "../catalog/mod.ts";
import { type Client, ErrorCode, loadClientSdk, McpError } from "../mcp/sdk.ts";
import type { CallToolResult, Progress, Transport } from "../mcp/sdk.ts";
import { checkOutput, type ToolMetadata } from "../mcp/output_check.ts";
import { InvalidResultError, messageOf } from "../mcp/errors.ts";
import { type Era, MODERN_VERSION } from "../mcp/light.ts";
import type { WireTap } from "../mcp/mod.ts";
// Loaded when a stdio server first connects (start-up time: the host's `initialize` is answered first).
import type { StdioClientTransport } from "./stdio.ts";
import { isLocalFailure, PendingCalls } from "./deadline.ts";
import { type LineSpillPolicy } from "../json/lines.ts";
import { ProtocolViolation } from "../mcp/jsonrpc_line.ts";
import type { RawResult } from "../json/raw_json.ts";
import type { ServerAuth } from "../auth/mod.ts";
import { type RejectedTool, screenTools, screenToolsSteps } from "../trust/limits.ts";
import { listToolsPage } from "../trust/list_tools.ts";
import { Stepper } from "../json/slices.ts";
import {
  backoffDelay,
  CallTimeoutError,
  DEFAULT_RESTART_POLICY,
  type DownstreamState,
  OutcomeUnknownError,
  PermanentError,
  refusalError,
  type RestartPolicy,
  ServerUnavailableError,
} from "./failures.ts";
// Loaded when a remote server first connects: a gateway of stdio servers starts without the HTTP side.
import type { RemoteHost } from "./remote.ts";
import { clipText, GARBAGE_QUOTE_CHARS, redact, STDERR_TAIL_BYTES, Tail } from "./stderr.ts";

// Where the hub and the gateway import them from.
export {
  backoffDelay,
  CallTimeoutError,
  DEFAULT_RESTART_POLICY,
  type DownstreamState,
  OutcomeUnknownError,
  type RestartPolicy,
  ServerUnavailableError,
} from "./failures.ts";

/** Lists of fewer tools are packed at once (no turn of the event loop in between). */
const PACK_STEPS_MIN_TOOLS = 1_000;

/** Characters of definitions packed (serialized) between two yields (~1 ms). */
const PACK_CHARS = 256 * 1024;

/** The SDK's client module, once the first server began to connect (see sdk_client.ts). */
let clientSdk: typeof import("../mcp/sdk_client.ts") | undefined;
/** The stdio client end (`stdio.ts`), once a stdio server has connected. */
let stdio: typeof import("./stdio.ts") | undefined;

/** Whether `transport` is the stdio client end (only ever made once `stdio.ts` is loaded). */
function isStdio(transport: unknown): transport is StdioClientTransport {
  return stdio !== undefined && transport instanceof stdio.StdioClientTransport;
}

/** The era one server spoke when it last connected (see {@linkcode DownstreamOptions.eras}). */
export interface EraCache {
  load(): "legacy" | "modern" | undefined;
  save(era: "legacy" | "modern"): void;
}

/**
 * `defs.map(packTool)` in steps (100,000 definitions take ~0.1 s to serialize); undefined when `stop`
 * says so between two steps.
 */
function* packSteps(
  defs: readonly ToolDefinition[],
  stop: () => boolean = () => false,
): Generator<void, PackedTool[] | undefined> {
  const packed: PackedTool[] = [];
  let chars = 0;
  for (const def of defs) {
    if (chars >= PACK_CHARS) {
      chars = 0;
      yield;
      if (stop()) return undefined;
    }
    const tool = packTool(def);
    packed.push(tool);
    chars += tool.json.length;
  }
  return packed;
}

/** How often a server in `needs_auth` looks for a login in the store. */
export const LOGIN_POLL_MS = 1000;

/** What the hub needs to start a downstream. */
export interface DownstreamOptions {
  /** The gateway's own environment; the server's `env` is merged over it. */
  env: Record<string, string>;
  /** `clientInfo` sent to the server. */
  clientName: string;
  clientVersion: string;
  connectTimeoutMs: number;
  /** Called with a line for the gateway's stderr log. */
  log: (line: string) => void;
  /** Called after the server's tool list changed (refreshed). */
  onToolsChanged?: () => void;
  /** Called whenever the state changes. */
  onStateChange?: () => void;
  /** @default DEFAULT_RESTART_POLICY */
  restartPolicy?: RestartPolicy;
  /**
   * The server's last good tool list (from the store): listed as its tools while its first connection
   * attempt is under way, so the first `tools/list` is complete. A promise: the list as it is read in
   * steps (see {@linkcode Downstream.useCachedTools}).
   */
  cachedTools?: readonly ToolDefinition[] | Promise<readonly ToolDefinition[] | undefined>;
  /**
   * The protocol era the server spoke when last connected (kept in the store per server fingerprint):
   * a server of unknown era, or one known to speak 2026-07-28, is probed with `server/discover` first; a
   * known legacy one gets the 2025 `initialize` first (see mcp/era.ts).
   */
  eras?: EraCache;
  /** Called with every tool list the server answers (to keep the cache). */
  onToolsListed?: (tools: readonly ToolDefinition[]) => void;
  /** OAuth for a remote server (tokens from the store); undefined = none. */
  auth?: ServerAuth;
  /**
   * Called with each new session's client before it connects: declares client capabilities and
   * installs the handlers of server-to-client requests and notifications (see passthrough.ts).
   */
  onClient?: (client: Client) => void;
  /** Writes a long fast-path result into the spool as it arrives (stdio servers; see stdio.ts and json/lines.ts). */
  spill?: LineSpillPolicy;
  /**
   * A tap for each new connection's messages (the gateway's CLIENT spans of the requests no caller
   * traced: see mcp/era.ts); undefined = none (tracing off).
   */
  wire?: (transport: "pipe" | "tcp") => WireTap | undefined;
}

/** Options of one call. */
export interface DownstreamCallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: (progress: Progress) => void;
  /**
   * Relay the result as bytes (a {@linkcode RawResult}) where the connection allows it: a stdio server,
   * a tool that does not require task-based execution (a tool with an `outputSchema` gets the SDK
   * client's check of its `structuredContent`, made here). @default false
   */
  raw?: boolean;
  /**
   * For the request's `params._meta`: W3C trace context (the gateway's CLIENT span), and a 2026-07-28
   * host's client capabilities (declared to a 2026-07-28 server only: see mcp/era.ts).
   */
  meta?: object;
  /** Told the JSON-RPC id of the request once it is known (the fast path's own ids). */
  onRequestId?: (id: string | number) => void;
}

/** A connection to one configured server, restarted with backoff when it fails. */
export class Downstream {
  /** The entry it was started from; the hub replaces it on a reload that changed descriptive fields only. */
  config: ServerConfig;
  #options: DownstreamOptions;
  #policy: RestartPolicy;
  #state: DownstreamState;
  #error?: string;
  /** Kept packed (JSON text), so 100,000 listed tools are not an object graph on the gateway's heap. */
  #tools: PackedTool[] = [];
  #cached?: readonly PackedTool[];
  /** Settles once a cached list given as a promise is read, screened and packed (or dropped). */
  #cacheLoaded: Promise<void> = Promise.resolve();
  #cacheLoading = false;
  /** The server has answered a `tools/list` of its own (a cached list still loading is then dropped). */
  #listedLive = false;
  #rejected: RejectedTool[] = [];
  /** list_changed coalescing: the refresh in flight, and whether one more is queued behind it. */
  #refreshing?: Promise<void>;
  #refreshQueued = false;
  #everConnected = false;
  /** Transports being closed after a failed attempt; close() waits for them (no orphan). */
  #teardowns = new Set<Promise<void>>();
  #client?: Client;
  #transport?: Transport;
  /** The SDK client's calls in flight on the session of `#client` (see deadline.ts). */
  #calls?: PendingCalls;
  #tail = new Tail(STDERR_TAIL_BYTES);
  /**
   * A stdio connection attempt opened with a probe failed (the process exited, or the attempt timed out:
   * a server the probe left unable to answer): later attempts of this gateway open with the 2025
   * `initialize` (which still finds a modern-only server: it refuses it), so a server that fails at every
   * start is not started twice an attempt, and one the probe wedges connects on the next attempt. (Over
   * HTTP a second dial costs no process: a server unreachable at first is probed again when it is back.)
   */
  #probeSpent = false;
  #ready: Promise<void> = Promise.resolve();
  #secrets: string[];
  #closing = false;
  #failures = 0;
  #starts = 0;
  #connectedAt?: number;
  #nextAttemptAt?: number;
  #timer?: ReturnType<typeof setTimeout>;
  #loginMark = 0;

  constructor(config: ServerConfig, options: DownstreamOptions) {
    this.config = config;
    this.#options = options;
    this.#policy = options.restartPolicy ?? DEFAULT_RESTART_POLICY;
    this.#state = !config.enabled ? "disabled" : config.loadError !== undefined ? "failed" : "connecting";
    if (config.loadError !== undefined) this.#error = config.loadError;
    const cached = options.cachedTools;
    if (cached instanceof Promise) this.useCachedTools(cached);
    else if (cached) {
      const screened = screenTools(cached);
      this.#cached = screened.accepted.map(packTool);
      this.#rejected = screened.rejected;
    }
    this.#secrets = [
      ...Object.values(config.env),
      ...Object.values(config.headers),
      ...(config.secrets ?? []),
    ]
      .map(String);
  }

  get name(): string {
    return this.config.name;
  }
  get state(): DownstreamState {
    return this.#state;
  }
  /** A short reason when not connected, secrets redacted. */
  get error(): string | undefined {
    return this.#error;
  }
  /**
   * The live tools when connected; the cached ones during the first connection attempt; else none.
   * Packed (see `PackedTool`); the same array until the list changes.
   */
  get tools(): readonly PackedTool[] {
    if (this.#state === "connected") return this.#tools;
    if (this.#state === "connecting" && !this.#everConnected && this.#cached) return this.#cached;
    return [];
  }
  /** Tools of the last list that were not mounted (over the depth or size limit), with the reason. */
  get rejected(): readonly RejectedTool[] {
    return this.#rejected;
  }
  /** True while the tools listed come from the cache (the first attempt is under way). */
  get toolsFromCache(): boolean {
    return this.#state === "connecting" && !this.#everConnected && this.#cached !== undefined;
  }
  /**
   * Takes the server's last good tool list as it is read from the store (in steps: a 100,000-tool list
   * takes ~0.5 s to read and parse): once read, it is checked against the limits and packed in slices
   * too, then listed as the server's tools while its first connection attempt is under way (the hub is
   * told, as for a refreshed list). Dropped when the server has listed its own tools meanwhile.
   * {@linkcode Downstream.cacheLoaded} settles when that is done.
   */
  useCachedTools(list: Promise<readonly ToolDefinition[] | undefined>): void {
    this.#cacheLoading = true;
    this.#cacheLoaded = list
      .then((tools) =>
        tools && this.#wantsCache() ? new Stepper(this.#cacheSteps(tools)).finishAsync() : undefined
      )
      .then(() => {}, () => {})
      .finally(() => this.#cacheLoading = false);
  }

  /** True while a cached list may still be listed: no live list yet, first attempt (or none yet). */
  #wantsCache(): boolean {
    return !this.#listedLive && !this.#everConnected && !this.#closing;
  }

  *#cacheSteps(tools: readonly ToolDefinition[]): Generator<void, void> {
    const { accepted, rejected } = yield* screenToolsSteps(tools);
    if (!this.#wantsCache()) return;
    const packed = yield* packSteps(accepted, () => !this.#wantsCache());
    if (!packed || !this.#wantsCache()) return;
    this.#cached = packed;
    this.#rejected = rejected;
    if (this.toolsFromCache) this.#options.onToolsChanged?.();
  }

  /** Settles once the cached list given as a promise is listed (or dropped); never rejects. */
  get cacheLoaded(): Promise<void> {
    return this.#cacheLoaded;
  }

  /** True while a cached list given as a promise is being read, screened and packed. */
  get cacheLoading(): boolean {
    return this.#cacheLoading;
  }

  /** Resolves once the current connection attempt has finished, either way. */
  get ready(): Promise<void> {
    return this.#ready;
  }
  /** When the next restart attempt is due (state `backoff`), ms since the epoch. */
  get nextAttemptAt(): number | undefined {
    return this.#state === "backoff" ? this.#nextAttemptAt : undefined;
  }
  /** In state `needs_auth`: the command that logs this server in. */
  get loginCommand(): string | undefined {
    return this.#state === "needs_auth" ? this.#options.auth?.loginCommand : undefined;
  }
  /** Consecutive failures since the last stable connection. */
  get failures(): number {
    return this.#failures;
  }
  /** Connection attempts made so far. */
  get starts(): number {
    return this.#starts;
  }
  /** Replaces this server's secrets (env and header values, `${VAR}` values) in text. */
  redact(text: string): string {
    const out = redact(text, this.#secrets);
    return this.#options.auth ? this.#options.auth.redact(out) : out;
  }

  /** The redacted tail of the server's stderr. */
  stderrTail(): string {
    return this.redact(this.#tail.text());
  }
  /** The stdio child's pid, when there is one. */
  get pid(): number | undefined {
    return isStdio(this.#transport) ? this.#transport.pid : undefined;
  }

  #setState(state: DownstreamState): void {
    this.#state = state;
    this.#options.onStateChange?.();
  }

  /** Starts connecting; the returned promise (also `ready`) never rejects. */
  connect(): Promise<void> {
    if (!this.config.enabled || this.config.loadError !== undefined || this.#closing) return this.#ready;
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#starts++;
    this.#state = "connecting";
    this.#error = undefined;
    // Each attempt's stderr stands alone: a restart does not repeat (and grow) the last one's.
    this.#tail = new Tail(STDERR_TAIL_BYTES);
    const t0 = performance.now();
    this.#ready = this.#connect().then(
      () => {
        if (this.#closing) return;
        this.#connectedAt = Date.now();
        this.#everConnected = true;
        const n = this.#tools.length;
        this.#options.log(
          `${this.name}: connected, ${n} tool${n === 1 ? "" : "s"}, ${
            ((performance.now() - t0) / 1000).toFixed(1)
          } s`,
        );
        this.#setState("connected");
      },
      (error) => {
        if (this.#closing) return;
        if (this.#options.auth?.isAuthError(error)) {
          this.#teardown();
          this.#needsAuth(error);
          return;
        }
        const reason = this.#describe(error);
        const tail = this.stderrTail().trim();
        this.#options.log(
          `server "${this.name}" failed to start: ${reason}${
            tail ? `\n  stderr:\n    ${tail.split("\n").slice(-10).join("\n    ")}` : ""
          }`,
        );
        this.#teardown();
        this.#failed(reason, !(error instanceof PermanentError));
      },
    );
    return this.#ready;
  }

  /** Records a failure and schedules the next attempt, or gives up on a crash loop. */
  #failed(reason: string, retryable: boolean): void {
    if (this.#closing) return;
    const now = Date.now();
    const wasConnected = this.#connectedAt !== undefined;
    if (wasConnected && now - this.#connectedAt! >= this.#policy.stableMs) this.#failures = 0;
    this.#connectedAt = undefined;
    this.#failures++;
    if (!retryable || this.#policy.maxFailures === 0) {
      this.#error = reason;
      this.#setState("failed");
      return;
    }
    if (this.#failures >= this.#policy.maxFailures) {
      this.#error =
        `crash loop: failed ${this.#failures} times in a row, not restarting (last: ${reason}); ` +
        "fix the server and restart the gateway";
      this.#options.log(`server "${this.name}": ${this.#error}`);
      this.#setState("failed");
      return;
    }
    // A server that was up gets one immediate reconnect; repeated failures back off.
    const delay = this.#failures === 1 && wasConnected ? 0 : backoffDelay(this.#failures, this.#policy);
    this.#error = reason;
    if (delay === 0) {
      this.connect().then(() => this.#options.onStateChange?.());
      return;
    }
    this.#nextAttemptAt = now + delay;
    this.#setState("backoff");
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.connect().then(() => this.#options.onStateChange?.());
    }, delay);
  }

  /** The server wants an OAuth login: no restarts; a login stored by `mcphub auth login` reconnects it. */
  #needsAuth(error: unknown): void {
    const auth = this.#options.auth!;
    this.#connectedAt = undefined;
    this.#error = this.redact(auth.reason(error)).replace(/\s+/g, " ").slice(0, 500);
    this.#loginMark = auth.mark();
    this.#options.log(`server "${this.name}": ${this.#error}`);
    this.#setState("needs_auth");
    this.#timer = setInterval(() => this.pickUpLogin(), LOGIN_POLL_MS);
  }

  /** In `needs_auth`: reconnects when a login was stored since; true if it started connecting. */
  pickUpLogin(): boolean {
    if (this.#state !== "needs_auth" || !this.#options.auth?.loggedInSince(this.#loginMark)) return false;
    this.#options.log(`server "${this.name}": found a new login, reconnecting`);
    this.connect().then(() => this.#options.onStateChange?.());
    return true;
  }

  #describe(error: unknown): string {
    const message = messageOf(error);
    // Redact, then cut: a secret straddling the cut must not survive in part.
    return clipText(this.redact(message).replace(/\s+/g, " "), 500);
  }

  async #connect(): Promise<void> {
    const timeoutMs = this.#options.connectTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const timedOut = new Promise<never>((_, reject) => {
      deadline.addEventListener("abort", () => {
        reject(new Error(`did not finish connecting within connect_timeout (${timeoutMs}ms)`));
      }, { once: true });
    });
    timedOut.catch(() => {});
    const attempt = async () => {
      clientSdk ??= await loadClientSdk();
      const cached = this.#options.eras?.load();
      const dial = async (probe: boolean) =>
        this.config.url
          ? (await import("./remote.ts")).connectRemote(this.#remoteHost(probe), deadline)
          : await this.#connectStdio(deadline, probe);
      // server/discover first when the server spoke 2026-07-28 last time, and when its era is not known
      // yet, on stdio and over HTTP (as the v2 client's auto mode does: a server that serves both
      // revisions is then spoken to in 2026-07-28; a legacy one answers the probe with an error, on the
      // same connection, and gets the 2025 initialize after it).
      const probe = cached !== "legacy" && !this.#probeSpent;
      // Spent unless the probe's attempt connects (set first: an attempt ended by its deadline may still
      // be unwinding when the next one starts).
      if (probe && !this.config.url) this.#probeSpent = true;
      try {
        await dial(probe);
        this.#probeSpent = false;
      } catch (error) {
        if (!probe || deadline.aborted || this.#closing) throw error;
        if (error instanceof PermanentError || this.#options.auth?.isAuthError(error)) throw error;
        // The server exited on the probe (some do on anything before initialize), or the cache was wrong:
        // once more with the legacy opening first, in this attempt (no failure counted). That process's
        // stderr is not this connection's.
        this.#options.log(
          `server "${this.name}": the probe for MCP ${MODERN_VERSION} failed (${this.#describe(error)}); ` +
            "connecting with the 2025 opening",
        );
        this.#teardown();
        this.#tail = new Tail(STDERR_TAIL_BYTES);
        await dial(false);
      }
      const era = (this.#transport as { era?: Era } | undefined)?.era?.era;
      // Opened without a probe, the era is still one a probe led to: the cache said legacy, or an earlier
      // attempt's probe failed (a server the probe breaks is not probed again by the next gateway).
      if ((era === "legacy" || era === "modern") && era !== cached) this.#options.eras?.save(era);
      await this.#refreshTools(deadline);
    };
    await Promise.race([attempt(), timedOut]);
  }

  /** A new SDK client (the SDK's client module is loaded by then: see `attempt` in #connect). */
  #newClient(): Client {
    const sdk = clientSdk!;
    const client = new sdk.Client(
      { name: this.#options.clientName, version: this.#options.clientVersion },
      { capabilities: {}, jsonSchemaValidator: sdk.lazyValidator() },
    );
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      if (this.#client === client) this.#toolsChanged();
    });
    this.#options.onClient?.(client);
    return client;
  }

  async #connectStdio(signal: AbortSignal, probe: boolean): Promise<void> {
    const { command, args, env, cwd } = this.config;
    const tail = this.#tail;
    stdio ??= await import("./stdio.ts");
    const transport = new stdio.StdioClientTransport({
      command: command!,
      args,
      probe,
      // Long enough for a slow start (an npx server), short enough to open in the 2025 way after it.
      probeMs: Math.floor(this.#options.connectTimeoutMs / 2),
      env: { ...this.#options.env, ...env },
      cwd,
      onStderr: (chunk) => tail.push(chunk),
      spill: this.#options.spill,
      tap: this.#options.wire?.("pipe"),
    });
    const client = this.#newClient();
    this.#watch(client, transport);
    try {
      await client.connect(transport, { signal, timeout: this.#options.connectTimeoutMs });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new PermanentError(
          `command "${command}" was not found; check servers.${this.name}.command and PATH`,
          { cause: error },
        );
      }
      if (error instanceof Deno.errors.NotCapable) {
        throw new PermanentError(
          /environment variable/.test(error.message)
            ? `not permitted to start "${command}" with LD_*/DYLD_* variables in its environment ` +
              `(${error.message}); unset them for the gateway, or use a build with unrestricted --allow-run`
            : `not permitted to run "${command}": this gateway's permissions do not include it ` +
              `(${error.message}); rebuild with \`deno task compile --config <your mcphub.yaml>\` ` +
              "(see `mcphub permissions`)",
          { cause: error },
        );
      }
      if (error instanceof Deno.errors.PermissionDenied) {
        throw new PermanentError(
          `the system refused to run "${command}" (${error.message}); check that it is executable`,
          { cause: error },
        );
      }
      // A server that refused the revision offered says so (whether or not it exited after).
      const refusal = transport.era.refusal;
      if (refusal) throw refusalError(refusal, error);
      const status = transport.exited ? await settledWithin(transport.exited, 100) : undefined;
      if (status) {
        throw new Error(
          `the process exited during start-up (${
            status.signal ? `signal ${status.signal}` : `exit code ${status.code}`
          })`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** What dialing a remote server needs of this downstream (see remote.ts). */
  #remoteHost(probe: boolean): RemoteHost {
    return {
      config: () => this.config,
      auth: this.#options.auth,
      connectTimeoutMs: this.#options.connectTimeoutMs,
      probe,
      log: (line) => this.#options.log(line),
      newClient: () => this.#newClient(),
      watch: (client, transport) => this.#watch(client, transport),
      wire: this.#options.wire && (() => this.#options.wire!("tcp")),
    };
  }

  #watch(client: Client, transport: Transport): void {
    const calls = new PendingCalls();
    this.#client = client;
    this.#transport = transport;
    this.#calls = calls;
    client.onclose = () => {
      // The SDK calls this before it fails its requests in flight with its own ConnectionClosed: ours go
      // first, as the gateway's own failure (a server's -32000 is never taken for it).
      calls.close();
      if (this.#client !== client || this.#closing) return;
      if (this.#state === "connected") {
        this.#options.log(`server "${this.name}": the connection closed`);
        this.#client = undefined;
        this.#transport = undefined;
        this.#track(transport.close());
        this.#failed("the connection closed", true);
      }
    };
    client.onerror = (error) => {
      if (this.#client !== client || this.#closing) return;
      if (error instanceof ProtocolViolation) {
        // Bytes that are not JSON-RPC on the protocol stream: the server is broken, restart it.
        this.#options.log(
          `server "${this.name}" wrote something that is not JSON-RPC on stdout (${error.message}: ` +
            `${JSON.stringify(clipText(this.redact(error.line), GARBAGE_QUOTE_CHARS))}); restarting it`,
        );
        this.#track(transport.close());
        return;
      }
      this.#options.log(`server "${this.name}": ${this.#describe(error)}`);
    };
  }

  /**
   * A `list_changed` storm costs at most one refresh in flight plus one queued: notifications that arrive
   * while a refresh runs ask for one more refresh after it, never one each.
   */
  #toolsChanged(): void {
    if (this.#refreshing) {
      this.#refreshQueued = true;
      return;
    }
    this.#refreshing = this.#refreshTools().then(() => this.#options.onToolsChanged?.(), (error) => {
      this.#options.log(`server "${this.name}": refreshing tools failed: ${this.#describe(error)}`);
    }).finally(() => {
      this.#refreshing = undefined;
      if (this.#refreshQueued && !this.#closing) {
        this.#refreshQueued = false;
        this.#toolsChanged();
      }
    });
  }

  /** Tool-list refreshes run so far (list_changed storms are coalesced). */
  get refreshes(): number {
    return this.#refreshCount;
  }
  #refreshCount = 0;

  async #refreshTools(signal?: AbortSignal): Promise<void> {
    this.#refreshCount++;
    const client = this.#client!;
    const tools: ToolDefinition[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await listToolsPage(client, cursor ? { cursor } : {}, {
        signal,
        timeout: this.#options.connectTimeoutMs,
      });
      for (const tool of page.tools as ToolDefinition[]) tools.push(tool);
      cursor = page.nextCursor;
      if (cursor !== undefined) {
        if (seen.has(cursor)) throw new Error(`tools/list repeated the cursor "${cursor}"`);
        seen.add(cursor);
      }
    } while (cursor !== undefined);
    // Over-limit definitions are dropped here, before anything serialises or indexes them.
    // In slices: 100,000 definitions take ~0.2 s to walk.
    const { accepted, rejected } = await new Stepper(screenToolsSteps(tools)).finishAsync();
    const known = new Set(this.#rejected.map((r) => `${r.name}\n${r.reason}`));
    for (const r of rejected) {
      if (!known.has(`${r.name}\n${r.reason}`)) {
        this.#options.log(`server "${this.name}": tool ${JSON.stringify(this.redact(r.name))} ${r.reason}`);
      }
    }
    this.#tools = accepted.length < PACK_STEPS_MIN_TOOLS
      ? accepted.map(packTool)
      : (await new Stepper(packSteps(accepted)).finishAsync())!;
    this.#rejected = rejected;
    this.#listedLive = true;
    try {
      this.#options.onToolsListed?.(accepted);
    } catch {
      // keeping the cache is best effort
    }
  }

  /** Why calls cannot reach this server now, in words for the caller. */
  unavailableReason(): string {
    const base = `server "${this.name}" is ${this.#state}`;
    if (this.#state === "backoff") {
      const wait = Math.max(0, (this.#nextAttemptAt ?? Date.now()) - Date.now());
      return `${base} after ${this.#failures} failed attempt${this.#failures === 1 ? "" : "s"} ` +
        `(next attempt in ${Math.ceil(wait / 1000)}s): ${this.#error}`;
    }
    return this.#error ? `${base}: ${this.#error}` : base;
  }

  /** The live session, once connected (waiting for an attempt under way); else ServerUnavailableError. */
  async session(): Promise<Client> {
    if (this.#state === "needs_auth" && this.pickUpLogin()) await this.#ready;
    if (this.#state === "connecting") await this.#ready;
    const client = this.#client;
    if (this.#state !== "connected" || !client) {
      throw new ServerUnavailableError(this.unavailableReason(), this.#state);
    }
    return client;
  }

  /** The server's `instructions` from its initialize result, while connected. */
  get instructions(): string | undefined {
    return this.#state === "connected" ? this.#client?.getInstructions() : undefined;
  }

  /** The live session when connected now, else undefined (never waits). */
  get client(): Client | undefined {
    return this.#state === "connected" ? this.#client : undefined;
  }

  /** Calls a tool by its downstream name. Throws OutcomeUnknownError / CallTimeoutError / ServerUnavailableError / McpError. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: DownstreamCallOptions,
  ): Promise<CallToolResult | RawResult> {
    if (this.#state === "needs_auth" && this.pickUpLogin()) await this.#ready;
    if (this.#state === "connecting") await this.#ready;
    const client = this.#client;
    if (this.#state !== "connected" || !client) {
      throw new ServerUnavailableError(this.unavailableReason(), this.#state);
    }
    const transport = this.#transport;
    const calls = this.#calls!;
    try {
      const metadata = client as unknown as ToolMetadata;
      // A modern server's call may take input rounds (MRTR): the SDK's path, through the era's relay.
      if (
        options.raw && isStdio(transport) && transport.era.era !== "modern" &&
        !metadata.isToolTaskRequired(name)
      ) {
        const result = await transport.callRaw(name, args, options);
        const validate = metadata.getToolOutputValidator(name);
        if (validate) {
          try {
            await checkOutput(name, result, validate);
          } catch (error) {
            result.raw.discardSpill();
            throw error;
          }
        }
        return result;
      }
      const params = options.meta
        ? { name, arguments: args, _meta: { ...options.meta } }
        : { name, arguments: args };
      // The deadline and the cancellation are the fast path's (deadline.ts); the SDK sends the request.
      return await calls.sdk(options, (sdk) =>
        client.callTool(params, {
          ...sdk,
          onprogress: options.onProgress,
        }) as Promise<CallToolResult>);
    } catch (error) {
      // Error text from a remote's answer (an HTTP body, a JSON-RPC error) may echo what we sent.
      this.#scrub(error);
      // The gateway's own failures only: a server's JSON-RPC error with the same code (-32000, -32001)
      // is that server's answer and keeps its code, message and data.
      if (isLocalFailure(error) && (error as McpError).code === ErrorCode.ConnectionClosed) {
        throw new OutcomeUnknownError((error as McpError).message, { cause: error });
      }
      if (isLocalFailure(error) && (error as McpError).code === ErrorCode.RequestTimeout) {
        throw new CallTimeoutError((error as McpError).message, { cause: error });
      }
      if (this.#options.auth?.isAuthError(error) && this.#client === client) {
        // The server refused the token (401, or 403 for missing scope) and no refresh helped: the call was not run.
        this.#teardown();
        this.#needsAuth(error);
        throw new ServerUnavailableError(
          `${this.unavailableReason()} (the server refused this call as unauthorized; it was not run)`,
          this.#state,
        );
      }
      if (error instanceof InvalidResultError) {
        // The SDK would reject it by its schema: this server's failure, reported as such.
        throw new InvalidResultError(
          `server "${this.name}" sent an invalid tools/call result: ${error.message}`,
          {
            cause: error,
          },
        );
      }
      if (this.#client !== client && !(options.signal?.aborted)) {
        throw new OutcomeUnknownError(messageOf(error), {
          cause: error,
        });
      }
      throw error;
    }
  }

  /** Redacts this server's secrets and stored OAuth tokens from an error's message and data, in place. */
  #scrub(error: unknown): void {
    if (!(error instanceof Error)) return;
    try {
      error.message = this.redact(error.message);
      if (error instanceof McpError && error.data !== undefined) {
        const text = JSON.stringify(error.data);
        const clean = this.redact(text);
        if (clean !== text) Object.defineProperty(error, "data", { value: JSON.parse(clean) });
      }
    } catch {
      // a frozen error or unserializable data: left as it is
    }
  }

  #teardown(): void {
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    if (transport) this.#track(transport.close());
  }

  /** Keeps a transport's closing in view until it is done, so close() can wait for it. */
  #track(closing: Promise<void>): void {
    const settled = closing.catch(() => {});
    this.#teardowns.add(settled);
    settled.finally(() => this.#teardowns.delete(settled));
  }

  /** Closes the session and stops the process (stdin EOF, SIGTERM, SIGKILL); no restart after this. */
  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    this.#timer = undefined;
    const transport = this.#transport;
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    if (this.#state !== "disabled") this.#state = "closed";
    try {
      if (isStdio(transport)) await transport.close();
      else await client?.close();
    } catch {
      // closing a broken connection
    }
    // A process from a failed attempt (one that hung in start-up) is still being stopped: wait for it.
    await Promise.all([...this.#teardowns]);
  }
}

/** The promise's value if it settles within `ms`, else undefined; leaves no timer behind. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
