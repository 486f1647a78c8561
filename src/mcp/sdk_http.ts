/**
 * The MCP SDK's HTTP client transports (Streamable HTTP and SSE, from the v2 client package), apart from
 * `sdk_downstream.ts` so that a gateway on stdio never loads them: they are needed only by HTTP upstream
 * servers and `mcp connect`. Import them with `loadHttpSdk()` (`sdk_downstream.ts`), or as types only: a
 * static import of this module loads the client package (and Ajv) at start. The server transport is
 * `sdk_host_http.ts`.
 *
 * @module
 */
import {
  SSEClientTransport as SdkSSEClientTransport,
  type SSEClientTransportOptions,
  StreamableHTTPClientTransport as SdkStreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from "@modelcontextprotocol/client";
import { ISSUER_CHECK } from "./sdk_auth.ts";

/** The SDK's Streamable HTTP client transport, its OAuth as the gateway's (`ISSUER_CHECK`, sdk_auth.ts). */
export class StreamableHTTPClientTransport extends SdkStreamableHTTPClientTransport {
  constructor(url: URL, options?: StreamableHTTPClientTransportOptions) {
    super(url, { ...ISSUER_CHECK, ...options });
  }
}

/** The SDK's SSE client transport, its OAuth as the gateway's (`ISSUER_CHECK`, sdk_auth.ts). */
export class SSEClientTransport extends SdkSSEClientTransport {
  constructor(url: URL, options?: SSEClientTransportOptions) {
    super(url, { ...ISSUER_CHECK, ...options });
  }
}
