/**
 * Dialing a remote server: Streamable HTTP, falling back to the older HTTP+SSE transport (or SSE alone when
 * configured), with the configured headers, OAuth, and the screen of over-limit tools on each transport's
 * fetch; a refusal by the binary's own --allow-net is reported as a start failure that retrying cannot fix.
 * Streamable HTTP speaks both eras (mcp/era_http.ts): a server that serves only MCP 2026-07-28 refuses the
 * 2025 opening and is then spoken to statelessly (or is probed with `server/discover` first, when it spoke
 * 2026-07-28 last time); such a server is never retried over SSE.
 *
 * @module
 */
import type { ServerConfig } from "../config/mod.ts";
import { type Client, loadHttpSdk, type Transport } from "../mcp/sdk.ts";
import {
  Era,
  eraFetch,
  EraTransport,
  ListenStreams,
  tapTransport,
  ToolParams,
  type WireTap,
} from "../mcp/mod.ts";
import type { ServerAuth } from "../auth/mod.ts";
import { PermanentError, refusalError } from "./failures.ts";

/** What dialing needs of the downstream it connects (see `Downstream`). */
export interface RemoteHost {
  /** The server's entry, as it is now. */
  config(): ServerConfig;
  auth?: ServerAuth;
  connectTimeoutMs: number;
  /** Open Streamable HTTP with a `server/discover` probe (the server spoke 2026-07-28 last time). */
  probe: boolean;
  log(line: string): void;
  /** A new SDK client for one session. */
  newClient(): Client;
  /** Makes the client and its transport the downstream's session, watched for close and errors. */
  watch(client: Client, transport: Transport): void;
  /** A tap for a new Streamable HTTP connection's messages (CLIENT spans); undefined = none. */
  wire?: () => WireTap | undefined;
}

/** Connects `host` to its remote server (`config().url`); the session is handed to `host.watch`. */
export async function connectRemote(host: RemoteHost, signal: AbortSignal): Promise<void> {
  try {
    await dial(host, signal);
  } catch (error) {
    if (notPermittedNet(error)) {
      const url = new URL(host.config().url!);
      const port = url.port || (url.protocol === "https:" ? "443" : "80");
      throw new PermanentError(
        `not permitted to connect to ${url.hostname}:${port} (${(error as Error).message}); rebuild with ` +
          "`deno task compile --config <your mcphub.yaml>` (see `mcphub permissions`)",
        { cause: error },
      );
    }
    throw error;
  }
}

async function dial(host: RemoteHost, signal: AbortSignal): Promise<void> {
  const auth = host.auth;
  const [{ SSEClientTransport, StreamableHTTPClientTransport }, { HttpListScreen }] = await Promise.all([
    loadHttpSdk(),
    // Only HTTP servers need it: loaded here, not before the host's `initialize` is answered.
    import("../trust/http_lists.ts"),
    auth?.ready(),
  ]);
  const url = new URL(host.config().url!);
  const requestInit: RequestInit = { headers: host.config().headers };
  // Each transport's fetch judges over-limit tools in tools/list answers from their bytes (http_lists.ts).
  const authOptions = auth ? { authProvider: auth.provider } : {};
  const sseTransport = () => {
    const screen = new HttpListScreen(auth?.fetch);
    const transport = new SSEClientTransport(url, {
      requestInit,
      eventSourceInit: { fetch: withHeaders(requestInit, screen.fetch) },
      fetch: screen.fetch,
      ...authOptions,
    });
    screen.watch(transport);
    const tap = host.wire?.();
    if (tap) tapTransport(transport, tap);
    return transport;
  };
  if (host.config().transport === "sse") {
    const client = host.newClient();
    const transport = sseTransport();
    host.watch(client, transport);
    await client.connect(transport, { signal, timeout: host.connectTimeoutMs });
    return;
  }
  const client = host.newClient();
  const screen = new HttpListScreen(auth?.fetch);
  const params = new ToolParams();
  const listens = new ListenStreams();
  const http = new StreamableHTTPClientTransport(url, {
    requestInit,
    fetch: eraFetch(screen.fetch, params, listens),
    ...authOptions,
  });
  screen.watch(http);
  // A modern server's changes are listened to; each listen is a stream, renewed when it ends.
  const era = new Era({ probe: host.probe, listen: true, renew: true });
  const transport = new EraTransport(
    http,
    era,
    params,
    (line) => host.log(`server "${host.config().name}": ${line}`),
    Math.floor(host.connectTimeoutMs / 2),
    listens,
  );
  transport.tap = host.wire?.();
  host.watch(client, transport);
  try {
    await client.connect(transport, { signal, timeout: host.connectTimeoutMs });
  } catch (httpError) {
    if (signal.aborted || notPermittedNet(httpError) || auth?.isAuthError(httpError)) throw httpError;
    if (era.refusal) throw refusalError(era.refusal, httpError);
    // A server that speaks 2026-07-28 speaks Streamable HTTP: its failure is not the transport's.
    if (era.era === "modern") throw httpError;
    // The server may speak only the older HTTP+SSE transport.
    await transport.close().catch(() => {});
    const sseClient = host.newClient();
    const sse = sseTransport();
    host.watch(sseClient, sse);
    try {
      await sseClient.connect(sse, { signal, timeout: host.connectTimeoutMs });
      host.log(`server "${host.config().name}": Streamable HTTP failed, connected over SSE`);
    } catch {
      throw httpError;
    }
  }
}

/** A refusal by the binary's own --allow-net (Streamable HTTP throws it as is, SSE wraps its message). */
function notPermittedNet(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable ||
    (error instanceof Error && /Requires net access/.test(error.message));
}

function withHeaders(init: RequestInit, base: typeof fetch = fetch): typeof fetch {
  return (input, requestInit) => {
    const headers = new Headers(requestInit?.headers);
    for (const [k, v] of new Headers(init.headers)) headers.set(k, v);
    return base(input, { ...requestInit, headers });
  };
}
