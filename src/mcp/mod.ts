/**
 * The SDK seam: the only room that imports the MCP TypeScript SDK. Types and the protocol's error codes
 * load with the process; the client and HTTP classes load on demand (`loadClientSdk`, `loadHttpSdk`,
 * `loadHostHttpSdk`), so a gateway on stdio starts without them. One seam per side: `sdk_downstream.ts`
 * (the client of the servers), `sdk_host.ts` (the server of the hosts), `sdk_auth.ts` (the OAuth client),
 * with the shared types in `sdk.ts`. Both protocol eras are spoken here: `Era` on a downstream
 * connection (a 2026-07-28-only server, its `input_required` rounds), `HostEra` on a host connection
 * (a 2026-07-28 host, `input_required` for a legacy server's requests); see docs/protocol.md.
 *
 * @module
 */
// What start-up needs (light.ts), then the rest of the room.
export * from "./light.ts";
export { loadHttpSdk } from "./sdk_downstream.ts";
export { loadHostHttpSdk } from "./sdk_host.ts";
// Types only: the classes load on demand (`loadHttpSdk`, `loadHostHttpSdk`).
export type { StreamableHTTPClientTransport } from "./sdk_http.ts";
export type { WebStandardStreamableHTTPServerTransport } from "./sdk_host_http.ts";
// The class (light.ts has its type only).
export { Era, type WireTap } from "./era.ts";
export { eraFetch, EraTransport, ListenStreams, tapTransport, ToolParams } from "./era_http.ts";
export { decodeHeaderValue, paramHeaderMismatch, scanParamHeaders } from "./param_headers.ts";
export { canonicalJson, HostEra, SERVED_VERSIONS } from "./host_era.ts";
export { SUBSCRIPTION_ID_KEY } from "./host_listen.ts";
export { CLIENT_CAPABILITIES_KEY } from "./era_names.ts";
