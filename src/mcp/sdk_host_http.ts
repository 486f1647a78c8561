/**
 * The Streamable HTTP server transport of `--listen` sessions: v2's (`@modelcontextprotocol/server` 2.4),
 * apart from `sdk_host.ts` so that a gateway on stdio never loads it (the server package's index loads Ajv
 * and its own protocol bundle). Import it with `loadHostHttpSdk()` (`sdk_host.ts`), or as a type only: a
 * static import of this module loads it at start.
 *
 * What a host sees over HTTP is v1's (1.32), which served `--listen` before: the two differences between
 * the transports that reach the host side are put back here, each on one named member of v2's class
 * (`tests/http/raw_sse_test.ts` fails by name when an upgrade removes one):
 * - the `onmessage` extra: v1 gave the host's `Protocol` `requestInfo` (`{headers, url}`, which its
 *   handlers' `extra.requestInfo` is), v2 gives the `Request` itself (`request`). Both are given.
 * - the priming event (resumability): v1 primed a stream for any protocol version from `2025-11-25` on,
 *   also one an `initialize` names that is not supported (a 2026-07-28 client's `initialize` is
 *   negotiated down, and its answer's stream is resumable), v2 only for supported versions
 *   (`supportsEmptySSEData`).
 *
 * @module
 */
import { WebStandardStreamableHTTPServerTransport as Base } from "@modelcontextprotocol/server";

/** The options of {@linkcode WebStandardStreamableHTTPServerTransport} (v2's). */
export type WebStandardStreamableHTTPServerTransportOptions = ConstructorParameters<typeof Base>[0];

/** What v1's transport handed the host's `Protocol` as `extra.requestInfo`. */
export interface RequestInfo {
  headers: Record<string, string>;
  url: URL;
}

type Handler = NonNullable<Base["onmessage"]>;
type Extra = Parameters<Handler>[1];

/**
 * v1's `requestInfo` of `request`, made when read: the host's `Protocol` hands it to every handler, and no
 * handler of the gateway reads it (v1 built it for every POST: the headers copied, the URL parsed).
 */
function requestInfo(request: Request): RequestInfo {
  let headers: Record<string, string> | undefined;
  let url: URL | undefined;
  return {
    get headers() {
      return headers ??= Object.fromEntries(request.headers.entries());
    },
    get url() {
      return url ??= new URL(request.url);
    },
  };
}

/**
 * `extra` with v1's `requestInfo` beside v2's `request` (unchanged when it has one already, or no request).
 * The transport makes an `extra` for each message: it is completed in place.
 */
function withRequestInfo(extra: Extra): Extra {
  if (!extra?.request || "requestInfo" in extra) return extra;
  (extra as Extra & { requestInfo: RequestInfo }).requestInfo = requestInfo(extra.request);
  return extra;
}

/** The members of v2's class this module replaces; each must exist (an upgrade that removes one fails loudly). */
export const REPLACED_MEMBERS = ["supportsEmptySSEData"] as const;

/** v2's Streamable HTTP server transport, with the host-visible behaviour of v1's (see the module's note). */
export class WebStandardStreamableHTTPServerTransport extends Base {
  constructor(options?: WebStandardStreamableHTTPServerTransportOptions) {
    super(options);
    const self = this as unknown as Record<string, unknown>;
    for (const name of REPLACED_MEMBERS) {
      if (typeof self[name] !== "function") {
        throw new TypeError(
          `The MCP SDK's Streamable HTTP server transport has no ${name} (an SDK upgrade changed it): ` +
            "update src/mcp/sdk_host_http.ts",
        );
      }
    }
    // v1's rule: an SSE stream is primed (and resumable) for any version from 2025-11-25 on.
    self.supportsEmptySSEData = (protocolVersion: string) => protocolVersion >= "2025-11-25";
    // `onmessage` is a field of v2's class (set on the instance, not the prototype): the accessor goes on
    // the instance too. What is read is the handler as set, wrapped: whoever wraps it again (the listener)
    // calls a handler that adds `requestInfo` once.
    let wrapped: Handler | undefined;
    Object.defineProperty(this, "onmessage", {
      configurable: true,
      enumerable: true,
      get: () => wrapped,
      set: (next: Handler | undefined) => {
        wrapped = next && ((message, extra) => next(message, withRequestInfo(extra)));
      },
    });
  }
}
