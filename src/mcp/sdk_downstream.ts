/**
 * The downstream seam: what the gateway's side as a client of its servers takes from the MCP SDK, loaded
 * with the process (types, the relay of a server's requests to the host). The `Client` with Ajv and the
 * schemas the gateway parses a server's answers with (v2 core's, `sdk_client.ts`) and the HTTP client
 * transports (`sdk_http.ts`) load on demand. The host's side is `sdk_host.ts`; `sdk.ts` re-exports both.
 *
 * @module
 */
// Types only: the classes load with the first connection (`loadClientSdk`).
export type { Client } from "./sdk_client.ts";
export type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/client";
/** A `tools/list` result as v2 core's schema gives it (`listToolsPage` parses with that schema). */
export type { ListToolsResult as ParsedToolList } from "@modelcontextprotocol/client";
import type { Client, RelayHandler } from "./sdk_client.ts";

/**
 * The SDK's `Client` and Ajv (`sdk_client.ts`), loaded when the first downstream connects: the host's
 * `initialize` is answered without them (see host_server.ts).
 */
export function loadClientSdk(): Promise<typeof import("./sdk_client.ts")> {
  return import("./sdk_client.ts");
}

/**
 * The SDK's HTTP client transports (`sdk_http.ts`: remote servers, `mcp connect`), loaded on first use: a
 * gateway on stdio starts without them.
 */
export function loadHttpSdk(): Promise<typeof import("./sdk_http.ts")> {
  return import("./sdk_http.ts");
}

/** A server-to-client request the gateway relays. */
export type RelayedMethod = "sampling/createMessage" | "elicitation/create" | "roots/list";

/**
 * Installs the relay of a server-to-client request on a downstream client: `handler` gets the params
 * exactly as the server sent them and its answer goes back as given (`Client.relayRequest`, sdk_client.ts).
 */
export function relayRequestHandler(client: Client, method: RelayedMethod, handler: RelayHandler): void {
  client.relayRequest(method, handler);
}
