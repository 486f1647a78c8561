/**
 * Both eras on a remote (HTTP) downstream connection: {@linkcode EraTransport} puts an {@linkcode Era}
 * between the gateway's client and the SDK's Streamable HTTP client transport (as the stdio client end
 * does in itself), and {@linkcode eraFetch} is that transport's `fetch`, doing what the revision asks of
 * HTTP that the 2025 transport does not know: a modern POST (its body carries the `_meta` envelope) gets
 * the `MCP-Protocol-Version` of its envelope and the `Mcp-Method` / `Mcp-Name` routing headers (the
 * latter as the v2 SDK encodes it: a value that is not plain visible ASCII as `=?base64?…?=`); and the
 * JSON-RPC error a 2026-07-28 server answers with HTTP 400 (its refusal of the 2025 `initialize`
 * (-32022), a header mismatch (-32020), …) reaches the client as the answer it is, not as a failed POST.
 * A modern server keeps no session: the transport sends no `Mcp-Session-Id` because none is given, and
 * opens no GET stream (the client's `notifications/initialized`, which would open it, is dropped by the
 * era).
 *
 * @module
 */
import type { JSONRPCMessage, Transport } from "./sdk.ts";
import { Era, MODERN_VERSION, PROTOCOL_VERSION_KEY, UNSUPPORTED_VERSION } from "./era.ts";

type Params = Record<string, unknown>;

/** Which body field `Mcp-Name` mirrors, per method (the revision's table, as the v2 SDK has it). */
const NAME_SOURCE: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

const BASE64_PREFIX = "=?base64?";
const BASE64_SUFFIX = "?=";

/** An HTTP field value for `value`: as is when plain visible ASCII, else the revision's base64 form. */
export function headerValue(value: string): string {
  let plain = value.length > 0 && value === value.trim() &&
    !(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX));
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i);
    plain = c === 9 || (c >= 32 && c <= 126);
  }
  if (plain) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${BASE64_PREFIX}${btoa(binary)}${BASE64_SUFFIX}`;
}

/** The JSON-RPC message a POST body is, when it is one (not a batch). */
function bodyMessage(body: unknown): Params | undefined {
  if (typeof body !== "string" || !body.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(body);
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The protocol version a message's `_meta` envelope names, if any. */
function envelopeVersion(message: Params): string | undefined {
  const meta = (message.params as Params | undefined)?._meta as Params | undefined;
  const version = meta?.[PROTOCOL_VERSION_KEY];
  return typeof version === "string" ? version : undefined;
}

/**
 * The `fetch` of a remote downstream connection that may speak 2026-07-28 (see the module
 * documentation); `base` is the `fetch` it wraps.
 */
export function eraFetch(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const message = init?.method === "POST" ? bodyMessage(init.body) : undefined;
    const version = message && envelopeVersion(message);
    let headers = init?.headers;
    if (message && version !== undefined && typeof message.method === "string") {
      const set = new Headers(init!.headers);
      set.set("mcp-protocol-version", version);
      if (message.id !== undefined) {
        set.set("mcp-method", message.method);
        const field = Object.hasOwn(NAME_SOURCE, message.method) ? NAME_SOURCE[message.method] : undefined;
        const name = field && (message.params as Params | undefined)?.[field];
        if (typeof name === "string") set.set("mcp-name", headerValue(name));
      }
      headers = set;
    }
    const response = await base(input, headers === init?.headers ? init : { ...init, headers });
    // A modern request's error answer, or a modern server's refusal of the 2025 opening, comes with
    // HTTP 400: it is the answer to the request (401/403 stay the auth flow's).
    const answerable = message?.id !== undefined &&
      (version === MODERN_VERSION || message.method === "initialize");
    if (
      !answerable || response.ok || response.status < 400 || response.status >= 500 ||
      response.status === 401 || response.status === 403 ||
      !(response.headers.get("content-type") ?? "").includes("application/json")
    ) {
      return response;
    }
    const text = await response.clone().text();
    const answer = bodyMessage(text);
    const error = answer?.error as { code?: unknown } | undefined;
    if (!answer || answer.id !== message!.id || typeof error?.code !== "number") return response;
    if (message!.method === "initialize" && error.code !== UNSUPPORTED_VERSION) return response;
    return new Response(text, { status: 200, headers: { "content-type": "application/json" } });
  };
}

/**
 * A client transport with the connection's {@linkcode Era} between the client and `inner` (see the
 * module documentation). A probe (`server/discover` sent first) that fails to send falls back to the
 * legacy opening at once.
 */
export class EraTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly era: Era;
  readonly #inner: Transport;

  constructor(inner: Transport, era: Era = new Era()) {
    this.#inner = inner;
    this.era = era;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    this.#inner.onmessage = (message) => this.#incoming(message);
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => this.onerror?.(error);
    return this.#inner.start();
  }

  #incoming(message: JSONRPCMessage): void {
    const out = this.era.incoming(message);
    if (out.send) this.#send(out.send).catch((error) => this.onerror?.(error as Error));
    for (const request of out.requests ?? []) this.onmessage?.(request);
    if (out.deliver) this.onmessage?.(out.deliver);
  }

  /** Sends to the server; a probe that cannot be sent gives way to the legacy opening. */
  async #send(message: JSONRPCMessage): Promise<void> {
    try {
      await this.#inner.send(message);
    } catch (error) {
      const opening = this.era.probeFailed();
      if (!opening) throw error;
      await this.#inner.send(opening);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const out = this.era.outgoing(message);
    if (out.reply) {
      const reply = out.reply;
      queueMicrotask(() => this.onmessage?.(reply));
    }
    if (out.send) await this.#send(out.send);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
