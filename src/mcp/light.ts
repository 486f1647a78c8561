/**
 * The SDK seam without the 2026-07-28 era's HTTP side (`era_http.ts`, `param_headers.ts`) and host side
 * (`host_era.ts`, `host_listen.ts`): what `mcp serve` on stdio needs before it answers a 2025 host's
 * `initialize` (start-up time). The host side loads with the first message that needs it (a 2026-07-28
 * request, see gateway/stdio_server.ts); an HTTP downstream loads the HTTP side when it connects.
 * `mod.ts` is all of it.
 *
 * @module
 */
export { type JSONRPCMessage, type Transport } from "./sdk.ts";
export {
  ErrorCode,
  httpStatusOf,
  invalidParams,
  invalidRequest,
  messageOf,
  ProtocolError,
} from "./errors.ts";
export {
  CLIENT_CAPABILITIES_KEY,
  MODERN_VERSION,
  PROTOCOL_VERSION_KEY,
  UNSUPPORTED_VERSION,
  withoutInputKey,
} from "./era_names.ts";
// Types only: the class loads with the downstream connections (downstream/stdio.ts, remote.ts).
export type { Era, EraName } from "./era.ts";
export { elicitationMode, elicitationRefusal } from "./elicitation.ts";
