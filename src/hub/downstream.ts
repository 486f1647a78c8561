/**
 * One downstream MCP server: connecting (stdio or remote), its tool list,
 * its state and stderr tail, and calls to it.
 *
 * @module
 */
import type { ServerConfig } from "../config/mod.ts";
import type { ToolDefinition } from "./catalog.ts";
import {
  CallToolResultSchema,
  Client,
  ErrorCode,
  McpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
} from "./sdk.ts";
import type { CallToolResult, Progress, Transport } from "./sdk.ts";
import { StdioClientTransport } from "./stdio.ts";

/** Bytes of a server's stderr kept for error reports. */
export const STDERR_TAIL_BYTES = 8 * 1024;

/** Where a downstream server is in its life. */
export type DownstreamState = "disabled" | "connecting" | "connected" | "failed" | "closed";

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
  /** Called when the connection drops while connected. */
  onDisconnect?: (reason: string) => void;
}

/** Options of one call. */
export interface DownstreamCallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: (progress: Progress) => void;
}

/** The call failed in a way that leaves its outcome unknown (the connection broke). */
export class OutcomeUnknownError extends Error {
  override name = "OutcomeUnknownError";
}

/** The call ran past its time limit. */
export class CallTimeoutError extends Error {
  override name = "CallTimeoutError";
}

/** Keeps the last N bytes of a stream. */
class Tail {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #cut = false;
  constructor(readonly limit: number) {}
  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk.slice());
    this.#size += chunk.length;
    while (this.#size - this.#chunks[0]!.length >= this.limit) {
      this.#size -= this.#chunks.shift()!.length;
      this.#cut = true;
    }
  }
  text(): string {
    const all = new Uint8Array(this.#size);
    let at = 0;
    for (const c of this.#chunks) all.set(c, at), at += c.length;
    let text = new TextDecoder().decode(all.subarray(Math.max(0, this.#size - this.limit)));
    // A cut first line may hold part of a secret that redaction cannot recognise.
    if (this.#cut || this.#size > this.limit) text = text.slice(text.indexOf("\n") + 1);
    return text;
  }
}

/** Replaces the values of a server's `env` and `headers` in text. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("***");
  }
  return out;
}

/** A connection to one configured server. */
export class Downstream {
  readonly config: ServerConfig;
  #options: DownstreamOptions;
  #state: DownstreamState;
  #error?: string;
  #tools: ToolDefinition[] = [];
  #client?: Client;
  #transport?: Transport;
  #tail = new Tail(STDERR_TAIL_BYTES);
  #ready: Promise<void> = Promise.resolve();
  #secrets: string[];
  #closing = false;

  constructor(config: ServerConfig, options: DownstreamOptions) {
    this.config = config;
    this.#options = options;
    this.#state = config.enabled ? "connecting" : "disabled";
    this.#secrets = [...Object.values(config.env), ...Object.values(config.headers)];
  }

  get name(): string {
    return this.config.name;
  }
  get state(): DownstreamState {
    return this.#state;
  }
  /** A short reason when failed, secrets redacted. */
  get error(): string | undefined {
    return this.#error;
  }
  get tools(): readonly ToolDefinition[] {
    return this.#state === "connected" ? this.#tools : [];
  }
  /** Resolves once the current connection attempt has finished, either way. */
  get ready(): Promise<void> {
    return this.#ready;
  }
  /** The redacted tail of the server's stderr. */
  stderrTail(): string {
    return redact(this.#tail.text(), this.#secrets);
  }
  /** The stdio child's pid, when there is one. */
  get pid(): number | undefined {
    return this.#transport instanceof StdioClientTransport ? this.#transport.pid : undefined;
  }

  /** Starts connecting; the returned promise (also `ready`) never rejects. */
  connect(): Promise<void> {
    if (!this.config.enabled) return this.#ready;
    this.#state = "connecting";
    this.#error = undefined;
    this.#ready = this.#connect().then(
      () => {
        this.#state = "connected";
      },
      (error) => {
        this.#state = "failed";
        this.#error = this.#describe(error);
        const tail = this.stderrTail().trim();
        this.#options.log(
          `server "${this.name}" failed: ${this.#error}${
            tail ? `\n  stderr:\n    ${tail.split("\n").slice(-10).join("\n    ")}` : ""
          }`,
        );
        this.#teardown();
      },
    );
    return this.#ready;
  }

  #describe(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    return redact(message, this.#secrets).replace(/\s+/g, " ").slice(0, 500);
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
      if (this.config.url) await this.#connectRemote(deadline);
      else await this.#connectStdio(deadline);
      await this.#refreshTools(deadline);
    };
    await Promise.race([attempt(), timedOut]);
  }

  #newClient(): Client {
    const client = new Client(
      { name: this.#options.clientName, version: this.#options.clientVersion },
      { capabilities: {} },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#refreshTools().then(() => this.#options.onToolsChanged?.(), (error) => {
        this.#options.log(`server "${this.name}": refreshing tools failed: ${this.#describe(error)}`);
      });
    });
    return client;
  }

  async #connectStdio(signal: AbortSignal): Promise<void> {
    const { command, args, env, cwd } = this.config;
    const transport = new StdioClientTransport({
      command: command!,
      args,
      env: { ...this.#options.env, ...env },
      cwd,
      onStderr: (chunk) => this.#tail.push(chunk),
    });
    const client = this.#newClient();
    this.#watch(client, transport);
    try {
      await client.connect(transport, { signal, timeout: this.#options.connectTimeoutMs });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new Error(`command "${command}" was not found; check servers.${this.name}.command and PATH`, {
          cause: error,
        });
      }
      if (error instanceof Deno.errors.PermissionDenied) {
        throw new Error(`not permitted to run "${command}": ${error.message}`, { cause: error });
      }
      const status = transport.exited ? await Promise.race([transport.exited, delay(50)]) : undefined;
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

  async #connectRemote(signal: AbortSignal): Promise<void> {
    const url = new URL(this.config.url!);
    const requestInit: RequestInit = { headers: this.config.headers };
    if (this.config.transport === "sse") {
      const client = this.#newClient();
      const transport = new SSEClientTransport(url, {
        requestInit,
        eventSourceInit: { fetch: withHeaders(requestInit) },
      });
      this.#watch(client, transport);
      await client.connect(transport, { signal, timeout: this.#options.connectTimeoutMs });
      return;
    }
    const client = this.#newClient();
    const transport = new StreamableHTTPClientTransport(url, { requestInit });
    this.#watch(client, transport);
    try {
      await client.connect(transport, { signal, timeout: this.#options.connectTimeoutMs });
    } catch (httpError) {
      if (signal.aborted) throw httpError;
      // The server may speak only the older HTTP+SSE transport.
      await transport.close().catch(() => {});
      const sseClient = this.#newClient();
      const sse = new SSEClientTransport(url, {
        requestInit,
        eventSourceInit: { fetch: withHeaders(requestInit) },
      });
      this.#watch(sseClient, sse);
      try {
        await sseClient.connect(sse, { signal, timeout: this.#options.connectTimeoutMs });
        this.#options.log(`server "${this.name}": Streamable HTTP failed, connected over SSE`);
      } catch {
        throw httpError;
      }
    }
  }

  #watch(client: Client, transport: Transport): void {
    this.#client = client;
    this.#transport = transport;
    client.onclose = () => {
      if (this.#client !== client || this.#closing) return;
      if (this.#state === "connected") {
        this.#state = "failed";
        this.#error = "the connection closed";
        this.#options.log(`server "${this.name}": the connection closed`);
        this.#options.onDisconnect?.(this.#error);
      }
    };
    client.onerror = (error) => {
      if (this.#client !== client || this.#closing) return;
      this.#options.log(`server "${this.name}": ${this.#describe(error)}`);
    };
  }

  async #refreshTools(signal?: AbortSignal): Promise<void> {
    const client = this.#client!;
    const tools: ToolDefinition[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, {
        signal,
        timeout: this.#options.connectTimeoutMs,
      });
      tools.push(...(page.tools as ToolDefinition[]));
      cursor = page.nextCursor;
      if (cursor !== undefined) {
        if (seen.has(cursor)) throw new Error(`tools/list repeated the cursor "${cursor}"`);
        seen.add(cursor);
      }
    } while (cursor !== undefined);
    this.#tools = tools;
  }

  /** Calls a tool by its downstream name. Throws OutcomeUnknownError / CallTimeoutError / McpError. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: DownstreamCallOptions,
  ): Promise<CallToolResult> {
    const client = this.#client;
    if (this.#state !== "connected" || !client) {
      throw new Error(`server "${this.name}" is ${this.#state}${this.#error ? `: ${this.#error}` : ""}`);
    }
    try {
      return await client.callTool({ name, arguments: args }, CallToolResultSchema, {
        signal: options.signal,
        timeout: options.timeoutMs,
        maxTotalTimeout: options.timeoutMs,
        onprogress: options.onProgress,
      }) as CallToolResult;
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        throw new OutcomeUnknownError(error.message, { cause: error });
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new CallTimeoutError(error.message, { cause: error });
      }
      if (this.#state !== "connected" && !(options.signal?.aborted)) {
        throw new OutcomeUnknownError(error instanceof Error ? error.message : String(error), {
          cause: error,
        });
      }
      throw error;
    }
  }

  #teardown(): void {
    const transport = this.#transport;
    this.#client = undefined;
    this.#transport = undefined;
    transport?.close().catch(() => {});
  }

  /** Closes the session and stops the process (stdin EOF, SIGTERM, SIGKILL). */
  async close(): Promise<void> {
    this.#closing = true;
    const transport = this.#transport;
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    if (this.#state !== "disabled") this.#state = "closed";
    try {
      if (transport instanceof StdioClientTransport) await transport.close();
      else await client?.close();
    } catch {
      // closing a broken connection
    }
  }

  /** Reconnects after a dropped connection; the caller makes sure only one runs at a time. */
  async reconnect(): Promise<void> {
    this.#teardown();
    await this.connect();
  }
}

function withHeaders(init: RequestInit): typeof fetch {
  return (input, requestInit) => {
    const headers = new Headers(requestInit?.headers);
    for (const [k, v] of new Headers(init.headers)) headers.set(k, v);
    return fetch(input, { ...requestInit, headers });
  };
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}
