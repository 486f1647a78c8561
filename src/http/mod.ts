/**
 * The HTTP side: `mcp serve --listen` (Streamable HTTP at `/mcp`, many sessions, per-agent tokens,
 * health, the live page) and `mcp connect` (a stdio-to-HTTP bridge).
 *
 * @module
 */
export {
  DRAIN_MS,
  listen,
  type Listener,
  type ListenOptions,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
  MAX_SESSIONS,
  RETRY_MS,
  type Session,
} from "./listener.ts";
export { allowedHosts, checkHostAndOrigin, hostOf, LOOPBACK_HOSTS, Refusal, TokenGuard } from "./guard.ts";
export { bridge, type BridgeOptions } from "./bridge.ts";
export { EventBudget, MAX_EVENT_BYTES, MAX_EVENTS, MAX_TOTAL_EVENT_BYTES, SessionEvents } from "./events.ts";
export { RAW_SSE_INTERNALS, rawMessageBytes, type RawResultSender, relayRawResults } from "./raw_sse.ts";
