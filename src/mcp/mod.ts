/**
 * The SDK seam: the only room that imports the MCP TypeScript SDK. Types and the protocol's error codes
 * load with the process; the client and HTTP classes load on demand (`loadClientSdk`, `loadHttpSdk`), so a
 * gateway on stdio starts without them. Both protocol eras are spoken here: `Era` on a downstream
 * connection (a 2026-07-28-only server, its `input_required` rounds), `HostEra` on a host connection
 * (a 2026-07-28 host, `input_required` for a legacy server's requests); see docs/protocol.md.
 *
 * @module
 */
export { type JSONRPCMessage, loadHttpSdk, type Transport } from "./sdk.ts";
// Types only: the classes load on demand (`loadHttpSdk`).
export type { StreamableHTTPClientTransport, WebStandardStreamableHTTPServerTransport } from "./sdk_http.ts";
export { ErrorCode, invalidParams, invalidRequest, messageOf, ProtocolError } from "./errors.ts";
export { Era, type EraName, MODERN_VERSION, UNSUPPORTED_VERSION } from "./era.ts";
export { eraFetch, EraTransport, ListenStreams, ToolParams } from "./era_http.ts";
export { decodeHeaderValue, paramHeaderMismatch, scanParamHeaders } from "./param_headers.ts";
export { canonicalJson, HostEra, SERVED_VERSIONS } from "./host_era.ts";
export { SUBSCRIPTION_ID_KEY } from "./host_listen.ts";
export { CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY } from "./era.ts";
export { elicitationMode, elicitationRefusal } from "./elicitation.ts";
