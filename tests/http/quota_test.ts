/**
 * Quotas per agent (issue 41): sessions, concurrent calls and requests per window, per agent with
 * defaults. A refused request gets a JSON-RPC error with a retry-after hint and is counted in the
 * agent's `stats`; one agent at its limit never affects another.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/mod.ts";
import { listen } from "../../src/http/mod.ts";
import { DENO, FIXTURE, q, tempDir, until } from "../helpers.ts";
import { assertQuotaRefusals, httpClient, type RpcError } from "./http_helpers.ts";

const TOKENS: Record<string, string> = {
  TOK_GREEDY: "greedy-token-0123456789abcdef",
  TOK_CHATTY: "chatty-token-0123456789abcdef",
  TOK_CALM: "calm-token-0123456789abcdef",
  TOK_METRICS: "metrics-token-0123456789abcdef",
};

Deno.test("quotas per agent: sessions, concurrent calls, requests per window; refusals carry retry-after and are counted; others unaffected", async () => {
  await using dir = await tempDir();
  const config = parseConfig(
    `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir.path)}]
agent_quota:
  concurrent_calls: 4
metrics_token: \${TOK_METRICS}
agents:
  greedy:
    token: \${TOK_GREEDY}
    quota: { sessions: 1, concurrent_calls: 1 }
  chatty:
    token: \${TOK_CHATTY}
    quota: { requests: 4, window: 1h }
  calm:
    token: \${TOK_CALM}
`,
    `${dir.path}/mcphub.yaml`,
    { env: { get: (key) => Deno.env.get(key) }, cwd: dir.path },
  );
  const listener = await listen({
    config,
    env: Deno.env.toObject(),
    tokenEnv: { get: (key) => TOKENS[key] },
    version: "test",
    log: () => {},
    address: { hostname: "127.0.0.1", port: 0 },
    storePath: `${dir.path}/store.db`,
    drainMs: 200,
  });
  try {
    const url = `${listener.origin}/mcp`;
    // Sessions: greedy's second is refused (429, a JSON-RPC error with a retry hint); calm's is not.
    await using greedy = await httpClient(url, TOKENS.TOK_GREEDY, "greedy");
    await assert.rejects(
      httpClient(url, TOKENS.TOK_GREEDY, "greedy-2"),
      (error: Error) => {
        assert.match(error.message, /"code":-32029/);
        assert.match(error.message, /agents\.greedy\.quota\.sessions/);
        assert.match(error.message, /"retry_after_ms":\d+/);
        return true;
      },
    );
    await using calm = await httpClient(url, TOKENS.TOK_CALM, "calm");

    // Concurrent calls: greedy's one call runs; a second at once is refused; calm's call is served.
    const abort = new AbortController();
    const running = greedy.callTool({ name: "fx__wait", arguments: { ms: 60_000 } }, undefined, {
      signal: abort.signal,
    }).catch(() => undefined);
    // The first call is admitted before the second is sent. Each request is its own POST, which a later
    // one can overtake (a ping's answer proves nothing about the call's): wait until the listener holds it.
    await until("greedy's first call admitted", () =>
      Promise.resolve(
        listener.sessions().some((s) => s.agent === "greedy" && s.calls.size === 1) ? true : undefined,
      ));
    const second = await greedy.callTool({ name: "fx__echo", arguments: { text: "x" } }).then(
      () => undefined,
      (error: Error & RpcError) => error,
    );
    assert.ok(second, "the second concurrent call was refused");
    assert.equal(second.code, -32029);
    assert.match(second.message, /agents\.greedy\.quota\.concurrent_calls/);
    assert.ok((second.data?.retry_after_ms ?? 0) > 0, JSON.stringify(second.data));
    const served = await calm.callTool({ name: "fx__echo", arguments: { text: "calm" } });
    assert.deepEqual(served.content, [{ type: "text", text: "calm" }]);
    // A call its host cancels gives its place back.
    abort.abort();
    await running;
    // The host's notifications/cancelled travels on its own POST, which the next call's POST can
    // overtake: wait until the listener has seen it (the event the release hangs on).
    await until("the cancelled call's place is given back", () =>
      Promise.resolve(
        listener.sessions().some((s) => s.agent === "greedy" && s.calls.size === 0) ? true : undefined,
      ));
    const after = await greedy.callTool({ name: "fx__echo", arguments: { text: "again" } });
    assert.deepEqual(after.content, [{ type: "text", text: "again" }]);

    // Requests per window: chatty's fifth request in the hour is refused, with the time left.
    await using chatty = await httpClient(url, TOKENS.TOK_CHATTY, "chatty"); // 1: initialize
    await chatty.listTools(); // 2
    await chatty.ping(); // 3
    await chatty.ping(); // 4
    const fifth = await chatty.listTools().then(() => undefined, (error: Error & RpcError) => error);
    assert.ok(fifth, "the fifth request was refused");
    assert.equal(fifth.code, -32029);
    assert.match(fifth.message, /agents\.chatty\.quota\.requests/);
    assert.ok((fifth.data?.retry_after_ms ?? 0) > 3_500_000, JSON.stringify(fifth.data));
    // calm is unaffected by either.
    assert.ok((await calm.listTools()).tools.some((t) => t.name === "fx__echo"));

    // Counted: each agent's stats name its own refusals, and only its own.
    const text = async (client: typeof calm) =>
      JSON.stringify((await client.callTool({ name: "stats", arguments: {} })).structuredContent);
    assert.match(await text(greedy), /"refused":\{"sessions":1,"concurrent_calls":1,"requests":0\}/);
    assert.doesNotMatch(await text(calm), /"refused"/);
    assert.deepEqual(listener.refusals("chatty"), { sessions: 0, concurrent_calls: 0, requests: 1 });
    // And in /metrics, per agent and quota.
    await assertQuotaRefusals(listener.origin, TOKENS.TOK_METRICS, [
      ["greedy", "sessions", 1],
      ["greedy", "concurrent_calls", 1],
      ["chatty", "requests", 1],
      ["calm", "requests", 0],
    ]);
  } finally {
    await listener.stop();
  }
});
