/**
 * The downstream seam: what the gateway's side as a client of its servers takes from the MCP SDK, loaded
 * with the process (types, the schemas that parse a server's answers and key the client's handlers, the
 * relay of a server's requests to the host). The `Client` with Ajv (`sdk_client.ts`) and the HTTP client
 * transports (`sdk_http.ts`) load on demand. The host's side is `sdk_host.ts`; `sdk.ts` re-exports both.
 *
 * `.js` subpath imports carry a `@ts-types` hint: without it Deno resolves the SDK's `./*` export to a
 * missing `.js.d.ts` and the types silently become `any`.
 *
 * @module
 */
export type { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/validation"
export type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  CallToolResultSchema,
  ElicitationCompleteNotificationSchema,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  ToolSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CreateMessageRequestSchema as CreateMessage,
  ElicitRequestSchema as Elicit,
  ListRootsRequestSchema as ListRoots,
  RequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Client as SdkClient } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { Result as SdkResult } from "@modelcontextprotocol/sdk/types.js";
/** The SDK's own parse of a request's result (what `Client.request` runs on an answer). */
// @ts-types="@modelcontextprotocol/sdk/server/zod-compat"
export { safeParse as sdkSafeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";

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

/** The server-to-client requests the gateway relays, each with params as loose as the base request's. */
const RELAYED = {
  "sampling/createMessage": RequestSchema.extend({ method: CreateMessage.shape.method }),
  "elicitation/create": RequestSchema.extend({ method: Elicit.shape.method }),
  "roots/list": RequestSchema.extend({ method: ListRoots.shape.method }),
};

/** A server-to-client request the gateway relays. */
export type RelayedMethod = keyof typeof RELAYED;

/**
 * Installs the relay of a server-to-client request on a downstream client: `handler` gets the params
 * exactly as the server sent them and its answer goes back as given. The SDK `Client`'s own handling
 * (a parse of the request and of the answer against its models, which drops every key they do not
 * name: an elicitation's `$schema`, `title`, `x-…` keys) is skipped; the host validates what it is sent.
 */
export function relayRequestHandler(
  client: SdkClient,
  method: RelayedMethod,
  handler: (
    params: Record<string, unknown> | undefined,
    extra: { signal: AbortSignal },
  ) => Promise<SdkResult>,
): void {
  // The base Protocol's setRequestHandler (the Client's own wraps elicitation and sampling in parses).
  let base: { setRequestHandler: SdkClient["setRequestHandler"] } | undefined;
  for (let p = Object.getPrototypeOf(client); p; p = Object.getPrototypeOf(p)) {
    if (Object.hasOwn(p, "setRequestHandler")) base = p;
  }
  base!.setRequestHandler.call(
    client,
    RELAYED[method],
    (request, extra) => handler(request.params as Record<string, unknown> | undefined, extra),
  );
}
