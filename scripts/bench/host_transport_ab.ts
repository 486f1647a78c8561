/**
 * The `--listen` sessions' transport alone, in process: v1's `WebStandardStreamableHTTPServerTransport`
 * (1.32.2, which served the sessions before #43 step 6) against the one the listener uses now
 * (`loadHostHttpSdk()`: v2's, src/mcp/sdk_host_http.ts), each with an event store and a session, answering
 * POSTed `tools/call` requests at once (no network, no downstream): requests/s of each, in alternating
 * rounds, and ours/v1. What the transport costs a call, apart from everything else a call does.
 *
 * Usage: deno run -A scripts/bench/host_transport_ab.ts [--requests N] [--rounds N]
 *
 * @module
 */
import { parseArgs } from "node:util";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js"
import { WebStandardStreamableHTTPServerTransport as V1 } from "npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp.js";
import { type JSONRPCMessage, loadHostHttpSdk } from "../../src/mcp/mod.ts";
import { relayRawResults, SessionEvents } from "../../src/http/mod.ts";

interface Plain {
  handleRequest(request: Request): Promise<Response>;
  start(): Promise<void>;
  close(): Promise<void>;
  send(message: JSONRPCMessage): Promise<void>;
  onmessage?: (message: JSONRPCMessage, extra?: unknown) => void;
}

const URL_MCP = "http://127.0.0.1/mcp";
const RESULT = new TextEncoder().encode('{"content":[{"type":"text","text":"Echo: bench"}]}');

/** A session on `transport` (taught raw results, as the listener does) answering every request at once. */
async function session(transport: Plain): Promise<(id: number) => Promise<void>> {
  const raw = relayRawResults(transport as never) as unknown as Plain & {
    sendResult(id: string | number, result: Uint8Array[]): Promise<void>;
  };
  raw.onmessage = (message) => {
    if (!("method" in message) || !("id" in message)) return;
    if (message.method === "initialize") {
      void raw.send({
        jsonrpc: "2.0",
        id: message.id,
        result: { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "b", version: "1" } },
      } as JSONRPCMessage);
    } else void raw.sendResult(message.id, [RESULT]);
  };
  await raw.start();
  const init = await raw.handleRequest(
    new Request(URL_MCP, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "b", version: "1" } },
      }),
    }),
  );
  await init.text();
  const headers = {
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-session-id": "s1",
    "mcp-protocol-version": "2025-11-25",
  };
  return async (id) => {
    const response = await raw.handleRequest(
      new Request(URL_MCP, {
        method: "POST",
        headers,
        body:
          `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"bench"}}}`,
      }),
    );
    const text = await response.text();
    if (!text.includes('"result"')) throw new Error(`no result: ${text.slice(0, 200)}`);
  };
}

/** Runs the comparison and prints it. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { requests: { type: "string", default: "20000" }, rounds: { type: "string", default: "10" } },
  });
  const { WebStandardStreamableHTTPServerTransport: Ours } = await loadHostHttpSdk();
  const options = () => ({
    sessionIdGenerator: () => "s1",
    eventStore: new SessionEvents(),
    retryInterval: 1000,
  });
  const targets = [
    { label: "v1 1.32.2", call: await session(new V1(options()) as unknown as Plain) },
    { label: "ours (v2 2.4.0)", call: await session(new Ours(options()) as unknown as Plain) },
  ];
  const perRound = Math.ceil(Number(values.requests) / Number(values.rounds));
  let id = 1;
  for (const t of targets) for (let i = 0; i < 500; i++) await t.call(id++);
  const elapsed = targets.map(() => 0);
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const t0 = performance.now();
      for (let i = 0; i < perRound; i++) await targets[k]!.call(id++);
      elapsed[k] += performance.now() - t0;
    }
  }
  const rates = elapsed.map((ms) => (perRound * Number(values.rounds)) / (ms / 1000));
  for (const [k, t] of targets.entries()) {
    console.log(
      `${t.label}: ${rates[k]!.toFixed(0)} requests/s, ${(1e6 / rates[k]!).toFixed(1)} µs a request`,
    );
  }
  console.log(`ours/v1: ${(rates[1]! / rates[0]!).toFixed(3)}x requests/s`);
}

if (import.meta.main) await main(Deno.args);
