/**
 * The host side of both protocol eras on one connection (the gateway's stdio). Each message is
 * classified: a 2025 `initialize` and everything of a legacy host pass exactly as before. A 2026-07-28
 * host sends no `initialize`: its requests carry the `_meta` envelope (protocol version, client
 * capabilities, client info), and `server/discover` asks what the gateway is. The gateway's server
 * (the SDK's, built for sessions) is then opened with an `initialize` made here from the envelope (its
 * answer is not the host's), so its handlers serve the modern host unchanged; `server/discover` is
 * answered from that opening's result. On the way out, results of a modern request get
 * `resultType: "complete"` and list results the cache hints the revision requires (`ttlMs: 0`,
 * `cacheScope: "private"`: the merged list changes as servers connect, and depends on the agent); what
 * the revision removed (server-to-client requests, list_changed and log notifications) is not sent to a
 * modern host: a server-to-client request is refused at once (its translation into `input_required`
 * is not built yet), so nothing waits on an answer that cannot come.
 *
 * @module
 */
import type { JSONRPCMessage } from "./sdk.ts";
import {
  CLIENT_CAPABILITIES_KEY,
  CLIENT_INFO_KEY,
  MODERN_VERSION,
  PROTOCOL_VERSION_KEY,
  SERVER_INFO_KEY,
  UNSUPPORTED_VERSION,
} from "./era.ts";

/** The 2025 revision the gateway's own `initialize` (made for a modern host) asks for. */
const LEGACY_VERSION = "2025-11-25";
/** Every revision the gateway serves, newest first (server/discover's `supportedVersions`). */
export const SERVED_VERSIONS = [MODERN_VERSION, LEGACY_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"];
/** The id of the `initialize` made for a modern host (a string: hosts' own ids cannot be told apart). */
const OPENING_ID = "mcphub-host-opening";
/** Results that carry the revision's cache hints. */
const LISTS = new Set(["tools/list", "prompts/list", "resources/list", "resources/templates/list"]);
/** Notifications a modern host still gets (the rest were removed or moved to subscriptions/listen). */
const MODERN_NOTIFICATIONS = new Set(["notifications/progress", "notifications/cancelled"]);

type Params = Record<string, unknown>;
type Message = { jsonrpc?: unknown; id?: string | number; method?: string; params?: Params; result?: Params };

/** What to do with a message from the host. */
export interface HostIncoming {
  /** Messages for the gateway's server, in order (the host's own last). */
  deliver: unknown[];
  /** An answer made here, written to the host. */
  reply?: JSONRPCMessage;
}

/** What to do with a message of the gateway's server. */
export interface HostOutgoing {
  /** The message to write to the host (undefined: nothing is written). */
  send?: JSONRPCMessage;
  /** Answers made here, written to the host (server/discover's, once the opening answered). */
  also?: JSONRPCMessage[];
  /** An answer made here, handed back to the gateway's server. */
  back?: JSONRPCMessage;
}

/** The eras of one host connection (see the module documentation). */
export class HostEra {
  /** "legacy" after a 2025 `initialize`; "modern" after a request with the envelope. */
  era: "opening" | "legacy" | "modern" = "opening";
  /** The opening made for a modern host: sent (its answer awaited), answered. */
  #opening?: "sent" | "done";
  #initialized = false;
  /** The opening's result (what server/discover answers from). */
  #openingResult?: Params;
  /** server/discover requests waiting for the opening's result. */
  #discovers: (string | number)[] = [];
  /** Methods of the modern host's requests awaiting their answers, by id. */
  #methods = new Map<string | number, string>();

  /** A message from the host (parsed, not yet checked). */
  incoming(value: unknown): HostIncoming {
    const m = value as Message;
    if (typeof m !== "object" || m === null || typeof m.method !== "string") return { deliver: [value] };
    if (m.method === "initialize") {
      if (this.era === "opening") this.era = "legacy";
      return { deliver: [value] };
    }
    const meta = m.params?._meta as Params | undefined;
    const version = meta?.[PROTOCOL_VERSION_KEY];
    const isRequest = m.id !== undefined;
    if (m.method === "server/discover" && isRequest) {
      if (this.era === "legacy" && version === undefined) return { deliver: [value] };
      if (this.#openingResult) return { deliver: [], reply: this.#discover(m.id!, this.#openingResult) };
      this.#discovers.push(m.id!);
      return { deliver: this.#open(meta, false) };
    }
    if (version === undefined || this.era === "legacy") return { deliver: [value] };
    if (version !== MODERN_VERSION) {
      if (!isRequest) return { deliver: [] };
      return {
        deliver: [],
        reply: {
          jsonrpc: "2.0",
          id: m.id!,
          error: {
            code: UNSUPPORTED_VERSION,
            message: `Unsupported protocol version: ${String(version).slice(0, 64)}`,
            data: { supported: SERVED_VERSIONS, requested: version },
          },
        },
      } as HostIncoming;
    }
    this.era = "modern";
    if (isRequest) this.#methods.set(m.id!, m.method);
    return { deliver: [...this.#open(meta, true), value] };
  }

  /** The gateway's server opened for a modern host (once), and `initialized` when `initialized`. */
  #open(meta: Params | undefined, initialized: boolean): unknown[] {
    const out: unknown[] = [];
    if (!this.#opening) {
      this.#opening = "sent";
      out.push({
        jsonrpc: "2.0",
        id: OPENING_ID,
        method: "initialize",
        params: {
          protocolVersion: LEGACY_VERSION,
          capabilities: meta?.[CLIENT_CAPABILITIES_KEY] ?? {},
          clientInfo: meta?.[CLIENT_INFO_KEY] ?? { name: "2026-07-28 host", version: "unknown" },
        },
      });
    }
    if (initialized && !this.#initialized) {
      this.#initialized = true;
      out.push({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    return out;
  }

  /** server/discover's answer, from the gateway's opening result. */
  #discover(id: string | number, init: Params): JSONRPCMessage {
    const { logging: _, ...capabilities } = (init.capabilities ?? {}) as Params;
    return {
      jsonrpc: "2.0",
      id,
      result: {
        resultType: "complete",
        supportedVersions: SERVED_VERSIONS,
        capabilities,
        ...(typeof init.instructions === "string" ? { instructions: init.instructions } : {}),
        ttlMs: 0,
        cacheScope: "private",
        _meta: { [SERVER_INFO_KEY]: init.serverInfo },
      },
    } as JSONRPCMessage;
  }

  /** True while messages of the host may take the gateway's fast path (not for a modern host). */
  get fastPath(): boolean {
    return this.era !== "modern";
  }

  /** A message of the gateway's server to the host. */
  outgoing(message: JSONRPCMessage): HostOutgoing {
    const m = message as Message & { error?: unknown };
    if (m.method === undefined && m.id === OPENING_ID) {
      this.#opening = "done";
      this.#openingResult = m.result ?? {};
      const discovers = this.#discovers.splice(0);
      const result = this.#openingResult;
      return { also: discovers.map((id) => this.#discover(id, result)) };
    }
    if (this.era !== "modern") return { send: message };
    if (m.method !== undefined) {
      if (m.id !== undefined) {
        return {
          back: {
            jsonrpc: "2.0",
            id: m.id,
            error: {
              code: -32601,
              message: `${m.method} cannot reach this host: it speaks MCP ${MODERN_VERSION}, where servers ` +
                "send no requests (mcphub does not yet turn them into input_required)",
            },
          } as JSONRPCMessage,
        };
      }
      return MODERN_NOTIFICATIONS.has(m.method) ? { send: message } : {};
    }
    const method = m.id === undefined ? undefined : this.#methods.get(m.id);
    if (method === undefined) return { send: message };
    this.#methods.delete(m.id!);
    if (!m.result) return { send: message };
    const result: Params = { resultType: "complete", ...m.result };
    if (LISTS.has(method)) {
      result.ttlMs ??= 0;
      result.cacheScope ??= "private";
    }
    return { send: { ...m, result } as JSONRPCMessage };
  }
}
