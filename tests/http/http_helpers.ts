/**
 * Starting `mcphub mcp serve --listen 127.0.0.1:0` under the permissions `mcphub permissions --listen`
 * derives, and connecting the official SDK client to it over Streamable HTTP.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DENO, gatewayFlags, ROOT, sandboxSync } from "../helpers.ts";
import { linkerEnvNames } from "../../src/cli/permissions.ts";

/** A running listener process. */
export interface RunningListener extends AsyncDisposable {
  child: Deno.ChildProcess;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  port: number;
  stderr(): string;
  /** Resolves when `text` has appeared on stderr. */
  waitFor(text: string | RegExp): Promise<void>;
  /** SIGTERM, then the exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

/** Options of {@linkcode startListener}. */
export interface StartListenerOptions {
  env?: Record<string, string>;
  args?: string[];
  db?: string;
  /** The listen address. @default "127.0.0.1:0" */
  listen?: string;
  /** Runs the listener under `ulimit -n` of this many open files. */
  openFiles?: number;
}

/** Starts the listener; resolves once it announced its address. */
export async function startListener(
  configPath: string,
  options: StartListenerOptions = {},
): Promise<RunningListener> {
  const db = options.db ?? `${configPath}.db`;
  const listen = options.listen ?? "127.0.0.1:0";
  // A sandboxed environment (tests/helpers.ts), removed once the listener has exited.
  const box = sandboxSync();
  const env = { ...box.env, ...options.env };
  const flags = await gatewayFlags(configPath, db, { env: options.env, listen, base: box.env });
  // Deno refuses LD_*/DYLD_* variables to children under a restricted --allow-run.
  for (const name of linkerEnvNames(env)) delete env[name];
  const command = options.openFiles === undefined ? DENO : "bash";
  const prefix = options.openFiles === undefined
    ? []
    : ["-c", `ulimit -n ${options.openFiles} && exec "$0" "$@"`, DENO];
  const child = new Deno.Command(command, {
    args: [
      ...prefix,
      "run",
      "--no-prompt",
      ...flags,
      `${ROOT}main.ts`,
      "--config",
      configPath,
      "--db",
      db,
      "mcp",
      "serve",
      "--listen",
      listen,
      ...options.args ?? [],
    ],
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  child.status.finally(() => box[Symbol.asyncDispose]());
  let text = "";
  const waiters: { match: string | RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (typeof w.match === "string" ? text.includes(w.match) : w.match.test(text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const exited = Promise.withResolvers<void>();
  const reading = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) {
      text += dec.decode(chunk, { stream: true });
      check();
    }
    exited.resolve();
  })();
  const waitFor = (match: string | RegExp) =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ match, resolve });
      check();
      exited.promise.then(() => reject(new Error(`listener exited before "${match}"; stderr:\n${text}`)));
    });
  try {
    await waitFor(/listening on http:\/\/\S+\/mcp/);
  } catch (error) {
    await child.status;
    await reading;
    throw error;
  }
  const url = /listening on (http:\/\/\S+\/mcp)/.exec(text)![1];
  const origin = url.slice(0, -"/mcp".length);
  let status: Promise<Deno.CommandStatus> | undefined;
  const stop = () => {
    status ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      const s = await child.status;
      await reading;
      return s;
    })();
    return status;
  };
  return {
    child,
    origin,
    url,
    port: Number(new URL(origin).port),
    stderr: () => text,
    waitFor,
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}

/** The official SDK client over Streamable HTTP, with a bearer token when given. */
export async function httpClient(
  url: string,
  token?: string,
  name = "mcphub-http-test",
): Promise<Client & AsyncDisposable> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return Object.assign(client, {
    async [Symbol.asyncDispose]() {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  });
}

/** One raw HTTP/1.1 request over TCP (fetch cannot set Host); returns the status line and headers. */
export async function rawRequest(port: number, head: string, body = ""): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const enc = new TextEncoder();
  const bytes = enc.encode(body);
  await conn.write(
    enc.encode(`${head.trim()}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`),
  );
  if (bytes.length) await conn.write(bytes);
  let text = "";
  const dec = new TextDecoder();
  for await (const chunk of conn.readable) text += dec.decode(chunk, { stream: true });
  return text;
}

/** The initialize request body. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** A quota refusal's JSON-RPC error, as the quota tests read it. */
export interface RpcError {
  code: number;
  message: string;
  data?: { retry_after_ms?: number };
}

/**
 * Scrapes `${origin}/metrics` with `token` and asserts each `[agent, quota, value]` row of
 * `mcphub_quota_refusals`.
 */
export async function assertQuotaRefusals(
  origin: string,
  token: string,
  rows: readonly (readonly [string, string, number])[],
): Promise<void> {
  const scrape = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(scrape.status, 200);
  const metrics = await scrape.text();
  for (const [agent, quota, value] of rows) {
    assert.match(
      metrics,
      new RegExp(`^mcphub_quota_refusals\\{agent="${agent}",quota="${quota}"\\} ${value}$`, "m"),
    );
  }
}
