/**
 * Namespaced resource URIs: `mcphub://SERVER/` + the server's own URI, percent-encoded
 * (encodeURIComponent). The server and the original URI are in the URI itself, so a read,
 * a subscription or a completion routes without a lookup table that could go stale.
 *
 * Resource templates are published as `mcphub://SERVER/~/` + the server's template unchanged: what the
 * host expands after `~/` is exactly what it would have sent the server directly (a value's `%26` or
 * `%2541` stays as it is). A plain namespaced URI never has a `/` after `SERVER/` (encodeURIComponent
 * encodes every `/`), so the two forms cannot be mistaken for each other.
 *
 * @module
 */
import type { CallToolResult } from "../mcp/sdk.ts";

/** The scheme of namespaced URIs. */
export const URI_PREFIX = "mcphub://";

/** `mcphub://SERVER/` + the original URI, percent-encoded. */
export function namespaceUri(server: string, uri: string): string {
  return `${URI_PREFIX}${server}/${encodeURIComponent(uri)}`;
}

/** What follows `SERVER/` in a published template: the server's own template, unchanged. */
export const TEMPLATE_MARK = "~/";

/**
 * A URI template (RFC 6570) namespaced: `mcphub://SERVER/~/` + the template as the server gave it, so
 * the host's expansion after the mark is byte for byte what it would have sent the server directly.
 */
export function namespaceTemplate(server: string, template: string): string {
  return `${URI_PREFIX}${server}/${TEMPLATE_MARK}${template}`;
}

/**
 * The server and original URI of a namespaced URI, template or expanded template; undefined when it is
 * not one.
 */
export function splitUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(URI_PREFIX)) return undefined;
  const rest = uri.slice(URI_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  const server = rest.slice(0, slash);
  const own = rest.slice(slash + 1);
  // An expanded template: exactly what the host would have sent the server.
  if (own.startsWith(TEMPLATE_MARK)) return { server, uri: own.slice(TEMPLATE_MARK.length) };
  try {
    return { server, uri: decodeURIComponent(own) };
  } catch {
    return undefined;
  }
}

/**
 * A tool result with its `resource_link` and embedded `resource` blocks pointing through the
 * gateway; the same object when there are none.
 */
export function namespaceResultUris(
  server: string,
  result: CallToolResult,
  options: { bare?: boolean } = {},
): CallToolResult {
  const content = result.content;
  if (!Array.isArray(content) || !content.some((b) => b.type === "resource_link" || b.type === "resource")) {
    return result;
  }
  // A `namespace: false` server's URIs are published unchanged, except one that claims the gateway's
  // scheme: it is put under the server's own name.
  const publish = (uri: string) => options.bare ? publishedBareUri(server, uri) : namespaceUri(server, uri);
  if (
    options.bare &&
    !content.some((b) =>
      (b.type === "resource_link" && typeof b.uri === "string" && b.uri.startsWith(URI_PREFIX)) ||
      (b.type === "resource" && typeof b.resource?.uri === "string" && b.resource.uri.startsWith(URI_PREFIX))
    )
  ) return result;
  return {
    ...result,
    content: content.map((block) => {
      if (block.type === "resource_link" && typeof block.uri === "string") {
        return { ...block, uri: publish(block.uri) };
      }
      if (block.type === "resource" && block.resource && typeof block.resource.uri === "string") {
        return { ...block, resource: { ...block.resource, uri: publish(block.resource.uri) } };
      }
      return block;
    }),
  };
}

/**
 * A `namespace: false` server's URI as published: unchanged, unless it starts with `mcphub://` (it would
 * name another server's resource): then namespaced under the server's own name, so it routes back to it.
 */
export function publishedBareUri(server: string, uri: string): string {
  return uri.startsWith(URI_PREFIX) ? namespaceUri(server, uri) : uri;
}
