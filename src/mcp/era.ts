/**
 * The protocol era of one downstream connection, decided by its opening: the gateway's client sends the
 * 2025 `initialize` as always, so a legacy server sees exactly what it saw before (no probe it could
 * hang or exit on). A server that serves only 2026-07-28 refuses that `initialize` with -32022
 * (unsupported protocol version) naming the revisions it supports, and keeps the connection open for a
 * modern opening: then the connection becomes modern in place. `server/discover` is sent (with the
 * per-request `_meta` envelope), and its answer is handed to the client as the answer to its
 * `initialize`; from then on every request and notification carries the envelope, and what the
 * revision removed (`notifications/initialized`, `ping`, `logging/setLevel`,
 * `notifications/roots/list_changed`) is answered or dropped here. The client above (the SDK's, the raw
 * fast path) stays one client for both eras.
 *
 * @module
 */
import type { JSONRPCMessage } from "./sdk.ts";

/** The 2026-07-28 revision: the stateless core. */
export const MODERN_VERSION = "2026-07-28";
/** The `_meta` key of a request's protocol version (2026-07-28). */
export const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
/** The `_meta` key of a request's client capabilities (2026-07-28). */
export const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** The `_meta` key of a request's client info (2026-07-28, optional). */
export const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
/** The `_meta` key of the server's info in a `server/discover` result. */
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
/** The error code of an unsupported protocol version (2026-07-28). */
export const UNSUPPORTED_VERSION = -32022;

/** The id of the `server/discover` the era sends (ids of the gateway's own; the SDK's are numbers). */
const DISCOVER_ID = "mcphub-discover";

type Params = Record<string, unknown>;
type Message = JSONRPCMessage & { id?: string | number; method?: string; params?: Params };

/** What to do with an outgoing message. */
export interface Outgoing {
  /** The message to write (undefined: nothing is written). */
  send?: JSONRPCMessage;
  /** An answer made here, handed to the client as if the server sent it. */
  reply?: JSONRPCMessage;
}

/** What to do with an incoming message. */
export interface Incoming {
  /** The message to hand to the client (undefined: nothing is handed). */
  deliver?: JSONRPCMessage;
  /** A message to write to the server. */
  send?: JSONRPCMessage;
}

/** A server's refusal of the 2025 opening that names no revision the gateway speaks. */
export interface Refusal {
  supported: string[];
  requested?: string;
}

/** The era of one connection (see the module documentation). */
export class Era {
  #era: "opening" | "legacy" | "modern" = "opening";
  /** The client's `initialize`, while its answer is awaited. */
  #initialize?: { id: string | number; params: Params };
  #meta: Params = {};
  /** Set when the server refused the 2025 opening and names no revision spoken here. */
  refusal?: Refusal;

  /** "legacy" or "modern" once decided; "opening" before. */
  get era(): "opening" | "legacy" | "modern" {
    return this.#era;
  }

  /** `_meta` for a message of the gateway's own (the raw fast path): the envelope added when modern. */
  meta(meta: Params | undefined): Params | undefined {
    return this.#era === "modern" ? { ...this.#meta, ...meta } : meta;
  }

  /** An outgoing message of the client. */
  outgoing(message: JSONRPCMessage): Outgoing {
    const m = message as Message;
    if (this.#era === "opening" && m.method === "initialize" && m.id !== undefined) {
      this.#initialize = { id: m.id, params: m.params ?? {} };
      return { send: message };
    }
    if (this.#era !== "modern" || m.method === undefined) return { send: message };
    switch (m.method) {
      case "notifications/initialized":
      case "notifications/roots/list_changed":
        return {};
      case "ping":
      case "logging/setLevel":
        // Removed by the revision: answered as a server that has nothing to do answers.
        return m.id === undefined ? {} : { reply: { jsonrpc: "2.0", id: m.id, result: {} } };
    }
    const params = m.params ?? {};
    return {
      send: {
        ...m,
        params: { ...params, _meta: { ...this.#meta, ...(params._meta as Params | undefined) } },
      } as JSONRPCMessage,
    };
  }

  /** An incoming message from the server. */
  incoming(message: JSONRPCMessage): Incoming {
    const m = message as Message & { result?: Params; error?: { code: number; data?: unknown } };
    if (this.#era === "modern" && m.id === DISCOVER_ID && m.method === undefined) {
      const init = this.#initialize!;
      this.#initialize = undefined;
      if (m.error) return { deliver: { jsonrpc: "2.0", id: init.id, error: m.error } as JSONRPCMessage };
      return {
        deliver: { jsonrpc: "2.0", id: init.id, result: initializeResult(m.result ?? {}, init.params) },
      };
    }
    if (this.#era !== "opening" || !this.#initialize || m.id !== this.#initialize.id || m.method) {
      return { deliver: message };
    }
    // The answer to the client's initialize: it decides the era.
    const data = m.error?.data as { supported?: unknown; requested?: unknown } | undefined;
    const supported = Array.isArray(data?.supported)
      ? data.supported.filter((v) => typeof v === "string")
      : [];
    if (m.error?.code !== UNSUPPORTED_VERSION || !supported.includes(MODERN_VERSION)) {
      this.#era = "legacy";
      this.#initialize = undefined;
      if (m.error?.code === UNSUPPORTED_VERSION) {
        this.refusal = {
          supported,
          requested: typeof data?.requested === "string" ? data.requested : undefined,
        };
      }
      return { deliver: message };
    }
    this.#era = "modern";
    const params = this.#initialize.params;
    this.#meta = {
      [PROTOCOL_VERSION_KEY]: MODERN_VERSION,
      [CLIENT_CAPABILITIES_KEY]: params.capabilities ?? {},
      ...(params.clientInfo ? { [CLIENT_INFO_KEY]: params.clientInfo } : {}),
    };
    return {
      send: { jsonrpc: "2.0", id: DISCOVER_ID, method: "server/discover", params: { _meta: this.#meta } },
    };
  }
}

/**
 * A `server/discover` result as the answer to a 2025 `initialize`: the version the client asked for
 * (the connection's era is the gateway's business, not the client's), the server's capabilities, info
 * and instructions.
 */
function initializeResult(discover: Params, initialize: Params): Params & { protocolVersion: string } {
  const meta = discover._meta as Params | undefined;
  const serverInfo = discover.serverInfo ?? meta?.[SERVER_INFO_KEY] ?? { name: "unknown", version: "0" };
  return {
    protocolVersion: String(initialize.protocolVersion),
    capabilities: discover.capabilities ?? {},
    serverInfo,
    ...(typeof discover.instructions === "string" ? { instructions: discover.instructions } : {}),
  };
}
