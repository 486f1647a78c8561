/**
 * `mcp connect URL`: a stdio-to-HTTP bridge, so a host that starts only stdio servers can use a shared
 * gateway. Messages pass through unchanged in both directions; a request the HTTP side refuses or
 * cannot deliver is answered with a JSON-RPC error naming why (never retried: it may have arrived).
 * A 2026-07-28 host's request sent with no session (its `_meta` envelope names the revision) gets the
 * HTTP headers the revision asks of a client, which a host on stdio does not send: `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` and a tool's `Mcp-Param-*` (from the `x-mcp-header` declarations of the tools
 * it listed; see mcp/era_http.ts); a JSON-RPC error the gateway answers with HTTP 400 reaches the host as
 * the answer it is.
 *
 * @module
 */
import { type ByteSource } from "../json/lines.ts";
import {
  eraFetch,
  httpStatusOf,
  type JSONRPCMessage,
  loadHttpSdk,
  PROTOCOL_VERSION_KEY,
  ToolParams,
} from "../mcp/mod.ts";
import { StdioServerTransport } from "../gateway/mod.ts";

/** Pause between a notification and a following response written to the host. */
const RESPONSE_GAP_MS = 5;

/** What {@linkcode bridge} needs. */
export interface BridgeOptions {
  url: URL;
  /** Sent as `Authorization: Bearer TOKEN`. */
  token?: string;
  input: ByteSource;
  output: WritableStream<Uint8Array>;
  log: (line: string) => void;
}

/** The whole message of an error and its causes. */
function chain(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    parts.push(e.message);
  }
  return parts.join(": ");
}

/**
 * When nothing listens at the URL (or its host does not resolve): the address and the likely cause, else
 * undefined.
 */
export function unreachable(error: unknown, url: URL): string | undefined {
  const text = chain(error);
  const address = `${url.origin}${url.pathname}`;
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  if (/Connection refused|ECONNREFUSED|tcp connect error/i.test(text)) {
    return `nothing listens at ${address} (connection refused): is the gateway running? Start it with ` +
      `mcphub mcp serve --listen ${url.hostname}:${port}, or check the URL's host and port`;
  }
  if (/dns error|failed to lookup|Name or service not known|ENOTFOUND|nodename nor servname/i.test(text)) {
    return `cannot resolve ${url.hostname} (${address}): check the URL's host name`;
  }
  if (/certificate|tls|ssl/i.test(text) && url.protocol === "https:") {
    return `TLS failed for ${address}: ${text}; check the certificate, or the scheme (http vs https)`;
  }
  return undefined;
}

/** The bridge: resolves when either side closes (stdin EOF, the gateway ending the session). */
export async function bridge(options: BridgeOptions): Promise<void> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const { StreamableHTTPClientTransport } = await loadHttpSdk();
  const params = new ToolParams();
  const modern = eraFetch(fetch, params);
  /** The version the 2025 session negotiated, once its `initialize` is answered. */
  let negotiated: string | undefined;
  const remote = new StreamableHTTPClientTransport(options.url, {
    requestInit: { headers },
    // A POST in a 2025 session goes with the session's version (the SDK's transport puts the envelope's
    // 2026-07-28 in the header of a modern host's message, which the session would refuse); without a
    // session, a modern message gets the revision's headers.
    fetch: (input, init) => {
      const sent = new Headers(init?.headers);
      if (!sent.has("mcp-session-id")) return modern(input, init);
      if (negotiated !== undefined) sent.set("mcp-protocol-version", negotiated);
      return fetch(input, { ...init, headers: sent });
    },
  });
  // Unchanged both ways: the listener serves both eras (a 2026-07-28 host's requests go without a session).
  const local = new StdioServerTransport(options.input, options.output, { unchanged: true });
  const initializing = new Set<string | number>();
  /** The host's `initialize` POST while it awaits its answer (what the host sends meanwhile waits). */
  let opening: Promise<unknown> | undefined;
  /** A 2026-07-28 host's `tools/list` requests awaiting their answer: id -> asked without a cursor. */
  const lists = new Map<string | number, boolean>();
  const done = Promise.withResolvers<void>();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    // Ends the HTTP session (DELETE) so the gateway frees it at once, then both sides.
    await remote.terminateSession().catch(() => {});
    await Promise.allSettled([remote.close(), local.close()]);
    done.resolve();
  };

  local.onmessage = (message: JSONRPCMessage) => {
    const request = "method" in message && "id" in message ? message : undefined;
    if (request?.method === "initialize") initializing.add(request.id);
    const sent = request?.params as { cursor?: unknown; _meta?: Record<string, unknown> } | undefined;
    if (request?.method === "tools/list" && sent?._meta?.[PROTOCOL_VERSION_KEY] !== undefined) {
      lists.set(request.id, sent.cursor === undefined);
    }
    // What the host sends behind its `initialize` (a host may not wait for the answer) waits for that
    // POST: its answer carries the session id the rest must go with (else the gateway would refuse a
    // session-less `notifications/initialized`: "Server not initialized"). Order is kept.
    const send = () =>
      remote.send(message).catch((error) => {
        const code = httpStatusOf(error);
        const text = `${code !== undefined ? `HTTP ${code}: ` : ""}${(error as Error).message}`;
        const cause = unreachable(error, options.url);
        options.log(`mcp connect: ${cause ?? `${options.url.origin}${options.url.pathname}: ${text}`}`);
        if (!request) return;
        const why = cause !== undefined
          ? cause
          : code === 401
          ? `the gateway refused the token (401); check --token or MCPHUB_TOKEN: ${text}`
          : code === 404
          ? `the gateway no longer has this session (it ended, e.g. idle); restart the host's connection: ${text}`
          : `the request could not be delivered to the gateway (it was not retried): ${text}`;
        local.send({ jsonrpc: "2.0", id: request.id, error: { code: -32603, message: why } }).catch(() => {});
      });
    if (request?.method === "initialize") {
      const posted: Promise<unknown> = opening = send();
      posted.finally(() => {
        if (opening === posted) opening = undefined;
      });
    } else if (opening) {
      // Each goes once the POST is answered, in the order sent; none waits for another's answer.
      opening.then(() => void send());
    } else {
      void send();
    }
  };
  // In order; a response right after a notification waits a moment: an SDK-based host handles a
  // response at once but a notification a microtask later, so a progress notification read in the same
  // chunk as its call's response would be dropped (the gateway paces its own stdio output the same way).
  let queue = Promise.resolve();
  let notifiedAt = 0;
  remote.onmessage = (answer: JSONRPCMessage) => {
    let message = answer;
    const listed = "id" in message ? lists.get(message.id as string | number) : undefined;
    if (listed !== undefined) {
      lists.delete((message as { id: string | number }).id);
      // Read for the tools' Mcp-Param-* declarations (a tool declaring them wrongly is left out, logged).
      if ("result" in message) {
        const page = params.page(message.result as Record<string, unknown>, listed);
        for (const line of page.excluded) options.log(`mcp connect: ${line}`);
        message = { ...message, result: page.result } as JSONRPCMessage;
      }
    }
    if ("id" in message && initializing.has(message.id as string | number) && "result" in message) {
      initializing.delete(message.id as string | number);
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") {
        negotiated = version;
        remote.setProtocolVersion(version);
      }
    }
    const isNotification = "method" in message && !("id" in message);
    queue = queue.then(async () => {
      const since = performance.now() - notifiedAt;
      if (!isNotification && since < RESPONSE_GAP_MS) {
        await new Promise((resolve) => setTimeout(resolve, RESPONSE_GAP_MS - since));
      }
      await local.send(message).catch(() => {});
      if (isNotification) notifiedAt = performance.now();
    });
  };
  local.onclose = () => void close();
  remote.onclose = () => void close();
  await remote.start();
  await local.start();
  return done.promise;
}
