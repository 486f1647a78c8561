/**
 * Quotas per agent across replicas (issue 41): two listeners on one PostgreSQL store count an agent's
 * sessions, running calls and requests per window together; another agent is unaffected; a replica that
 * stops gives its places back at once, one that stops heartbeating within the expiry (an injected clock);
 * an unreachable store falls back to counting per process without printing its password.
 */
import assert from "node:assert/strict";
import { type Config, parseConfig } from "../../src/config/mod.ts";
import { listen, type Listener } from "../../src/http/mod.ts";
import type { SharedQuotaOptions } from "../../src/http/shared_quota.ts";
import { PgQuotaLedger, pgQuotaMigrations, PgStore } from "../../src/store/mod.ts";
import { DENO, FIXTURE, q, tempDir, until } from "../helpers.ts";
import { pgCluster, pgTest } from "../store/_pg.ts";
import { assertQuotaRefusals, httpClient, type RpcError } from "./http_helpers.ts";

const TOKENS: Record<string, string> = {
  TOK_GREEDY: "greedy-token-0123456789abcdef",
  TOK_CALLER: "caller-token-0123456789abcdef",
  TOK_CHATTY: "chatty-token-0123456789abcdef",
  TOK_CALM: "calm-token-0123456789abcdef",
  TOK_METRICS: "metrics-token-0123456789abcdef",
};

function config(dir: string): Config {
  return parseConfig(
    `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --state, ${q(dir)}]
metrics_token: \${TOK_METRICS}
agents:
  greedy:
    token: \${TOK_GREEDY}
    quota: { sessions: 1 }
  caller:
    token: \${TOK_CALLER}
    quota: { concurrent_calls: 1 }
  chatty:
    token: \${TOK_CHATTY}
    quota: { requests: 4, window: 1h }
  calm:
    token: \${TOK_CALM}
`,
    `${dir}/mcphub.yaml`,
    { env: { get: (key) => Deno.env.get(key) }, cwd: dir },
  );
}

function replica(dir: string, store: string, shared: SharedQuotaOptions, log?: (line: string) => void) {
  return listen({
    config: config(dir),
    env: Deno.env.toObject(),
    tokenEnv: { get: (key) => TOKENS[key] },
    version: "test",
    log: log ?? (() => {}),
    address: { hostname: "127.0.0.1", port: 0 },
    storePath: store,
    drainMs: 200,
    sharedQuota: shared,
  });
}

/** A call refused or answered: the refusal's error, or undefined. */
function refusal(promise: Promise<unknown>): Promise<(Error & RpcError) | undefined> {
  return promise.then(() => undefined, (error: Error & RpcError) => error);
}

/** A count in the store: `query` with `?` = `agent` (every replica's rows, live or not). */
async function inStore(url: string, query: string, agent: string): Promise<number> {
  const store = new PgStore(url, { max: 1 });
  try {
    const [row] = await store.all(query, [agent]);
    return Number(row?.n ?? 0);
  } finally {
    await store.close();
  }
}

const HELD = "SELECT COALESCE(SUM(held), 0) AS n FROM quota_calls WHERE agent = ?";
const SESSIONS = "SELECT COUNT(*) AS n FROM quota_sessions WHERE agent = ?";

async function sessionRefused(url: string, token: string): Promise<void> {
  await assert.rejects(httpClient(url, token, "refused"), (error: Error) => {
    assert.match(error.message, /"code":-32029/);
    assert.match(error.message, /agents\.greedy\.quota\.sessions/);
    assert.match(error.message, /"retry_after_ms":\d+/);
    return true;
  });
}

pgTest(
  "quotas across two replicas on one PostgreSQL store: sessions, concurrent calls and requests per window span both; another agent is unaffected; refusals counted",
  async () => {
    const cluster = await pgCluster();
    const url = await cluster.database();
    await using dir = await tempDir();
    // One clock for both, fixed a second into an hour: the 1h window cannot turn during the test.
    const hour = 3_600_000;
    const now = () => Math.floor(Date.now() / hour) * hour + 1_000;
    const shared = { now, lingerMs: 50 };
    const a = await replica(dir.path, url, shared);
    const b = await replica(dir.path, url, shared);
    try {
      const urlA = `${a.origin}/mcp`;
      const urlB = `${b.origin}/mcp`;

      // Sessions: greedy's one session is on A; a second on B is refused (429 + the JSON-RPC error).
      await using greedy = await httpClient(urlA, TOKENS.TOK_GREEDY, "greedy");
      await sessionRefused(urlB, TOKENS.TOK_GREEDY);
      await sessionRefused(urlA, TOKENS.TOK_GREEDY);
      await using calmA = await httpClient(urlA, TOKENS.TOK_CALM, "calm-a");
      await using calmB = await httpClient(urlB, TOKENS.TOK_CALM, "calm-b");
      assert.deepEqual(b.refusals("greedy"), { sessions: 1, concurrent_calls: 0, requests: 0 });
      assert.deepEqual(a.refusals("greedy"), { sessions: 1, concurrent_calls: 0, requests: 0 });

      // Concurrent calls: caller's one call runs on A; its call on B is refused; calm's on B is served.
      await using callerA = await httpClient(urlA, TOKENS.TOK_CALLER, "caller-a");
      await using callerB = await httpClient(urlB, TOKENS.TOK_CALLER, "caller-b");
      const abort = new AbortController();
      const running = callerA.callTool({ name: "fx__wait", arguments: { ms: 60_000 } }, undefined, {
        signal: abort.signal,
      }).catch(() => undefined);
      await until("caller's call runs on A", () =>
        Promise.resolve(
          a.sessions().some((s) => s.agent === "caller" && s.calls.size === 1) ? true : undefined,
        ));
      const second = await refusal(callerB.callTool({ name: "fx__echo", arguments: { text: "x" } }));
      assert.ok(second, "the call on B was refused");
      assert.equal(second.code, -32029);
      assert.match(second.message, /agents\.caller\.quota\.concurrent_calls/);
      assert.ok((second.data?.retry_after_ms ?? 0) > 0, JSON.stringify(second.data));
      const served = await calmB.callTool({ name: "fx__echo", arguments: { text: "calm" } });
      assert.deepEqual(served.content, [{ type: "text", text: "calm" }]);
      // Cancelled on A: once A has given the place back to the store, B's call is served.
      abort.abort();
      await running;
      await until(
        "A gave caller's place back to the store",
        async () =>
          a.sessions().some((s) => s.agent === "caller" && s.calls.size === 0) &&
            await inStore(url, HELD, "caller") === 0
            ? true
            : undefined,
      );
      const after = await callerB.callTool({ name: "fx__echo", arguments: { text: "again" } });
      assert.deepEqual(after.content, [{ type: "text", text: "again" }]);
      assert.deepEqual(b.refusals("caller"), { sessions: 0, concurrent_calls: 1, requests: 0 });

      // Requests per window: chatty's four are spread over A and B; the fifth is refused on either.
      await using chattyA = await httpClient(urlA, TOKENS.TOK_CHATTY, "chatty-a"); // 1: initialize
      await using chattyB = await httpClient(urlB, TOKENS.TOK_CHATTY, "chatty-b"); // 2: initialize
      await chattyA.ping(); // 3
      await chattyB.listTools(); // 4
      for (const client of [chattyB, chattyA]) {
        const fifth = await refusal(client.listTools());
        assert.ok(fifth, "the fifth request was refused");
        assert.equal(fifth.code, -32029);
        assert.match(fifth.message, /agents\.chatty\.quota\.requests/);
        assert.ok((fifth.data?.retry_after_ms ?? 0) > 3_500_000, JSON.stringify(fifth.data));
      }
      assert.deepEqual(a.refusals("chatty"), { sessions: 0, concurrent_calls: 0, requests: 1 });
      assert.deepEqual(b.refusals("chatty"), { sessions: 0, concurrent_calls: 0, requests: 1 });

      // calm is unaffected by all of it, on both replicas.
      for (const calm of [calmA, calmB]) {
        assert.ok((await calm.listTools()).tools.some((t) => t.name === "fx__echo"));
      }
      assert.ok((await greedy.listTools()).tools.some((t) => t.name === "fx__echo"));
      // Counted in the agent's stats and in /metrics, on the replica that refused.
      const stats = JSON.stringify(
        (await callerB.callTool({ name: "stats", arguments: {} })).structuredContent,
      );
      assert.match(stats, /"refused":\{"sessions":0,"concurrent_calls":1,"requests":0\}/);
      await assertQuotaRefusals(b.origin, TOKENS.TOK_METRICS, [
        ["greedy", "sessions", 1],
        ["caller", "concurrent_calls", 1],
        ["chatty", "requests", 1],
        ["calm", "requests", 0],
      ]);
    } finally {
      await Promise.allSettled([a.stop(), b.stop()]);
    }
  },
);

pgTest(
  "a replica that stops gives its quota places back at once; one whose heartbeat lapses, once the expiry has passed",
  async () => {
    const cluster = await pgCluster();
    const url = await cluster.database();
    await using dir = await tempDir();
    const expiryMs = 30_000;
    // B's clock can jump ahead: the others' heartbeats then look as old as a crashed replica's.
    let ahead = 0;
    const b = await replica(dir.path, url, { expiryMs, lingerMs: 50, now: () => Date.now() + ahead });
    let a: Listener | undefined = await replica(dir.path, url, { expiryMs, lingerMs: 50 });
    let c: Listener | undefined;
    try {
      // An orderly stop: A's session place goes back with it.
      {
        await using _held = await httpClient(`${a.origin}/mcp`, TOKENS.TOK_GREEDY, "greedy-a");
        await sessionRefused(`${b.origin}/mcp`, TOKENS.TOK_GREEDY);
        await a.stop();
        a = undefined;
      }
      const greedyB = await httpClient(`${b.origin}/mcp`, TOKENS.TOK_GREEDY, "greedy-b");
      await greedyB[Symbol.asyncDispose]();
      await until(
        "B gave its greedy session's place back",
        async () =>
          !b.sessions().some((s) => s.agent === "greedy") && await inStore(url, SESSIONS, "greedy") === 0
            ? true
            : undefined,
      );

      // A replica that stops heartbeating (C, seen from B once B's clock is past C's heartbeat + expiry).
      c = await replica(dir.path, url, { expiryMs, lingerMs: 50 });
      await using _greedyC = await httpClient(`${c.origin}/mcp`, TOKENS.TOK_GREEDY, "greedy-c");
      await using callerC = await httpClient(`${c.origin}/mcp`, TOKENS.TOK_CALLER, "caller-c");
      await using callerB = await httpClient(`${b.origin}/mcp`, TOKENS.TOK_CALLER, "caller-b");
      const abort = new AbortController();
      const running = callerC.callTool({ name: "fx__wait", arguments: { ms: 60_000 } }, undefined, {
        signal: abort.signal,
      }).catch(() => undefined);
      await until("caller's call runs on C", () =>
        Promise.resolve(
          c!.sessions().some((s) => s.agent === "caller" && s.calls.size === 1) ? true : undefined,
        ));
      await sessionRefused(`${b.origin}/mcp`, TOKENS.TOK_GREEDY);
      const refused = await refusal(callerB.callTool({ name: "fx__echo", arguments: { text: "x" } }));
      assert.equal(refused?.code, -32029);
      assert.match(refused!.message, /agents\.caller\.quota\.concurrent_calls/);

      ahead = expiryMs + 1_000;
      await using _greedyB2 = await httpClient(`${b.origin}/mcp`, TOKENS.TOK_GREEDY, "greedy-b2");
      const served = await callerB.callTool({ name: "fx__echo", arguments: { text: "freed" } });
      assert.deepEqual(served.content, [{ type: "text", text: "freed" }]);
      assert.deepEqual(b.refusals("greedy"), { sessions: 2, concurrent_calls: 0, requests: 0 });
      assert.deepEqual(b.refusals("caller"), { sessions: 0, concurrent_calls: 1, requests: 0 });
      abort.abort();
      await running;
    } finally {
      await Promise.allSettled([a?.stop(), b.stop(), c?.stop()]);
    }
  },
);

pgTest(
  "sessions, call places and requests claimed by many replicas at once never pass the limit",
  async () => {
    const cluster = await pgCluster();
    const url = await cluster.database();
    const stores = Array.from(
      { length: 4 },
      () => new PgStore(url, { migrations: pgQuotaMigrations, max: 2 }),
    );
    try {
      const now = Date.now();
      const ledgers = stores.map((s, i) => new PgQuotaLedger(s, `r${i}`));
      for (const ledger of ledgers) assert.equal(await ledger.heartbeat(now, now + 60_000), true);
      assert.equal(await ledgers[0].heartbeat(now, now + 60_000), false, "renewed, not created");

      const opened = await Promise.all(ledgers.map(async (ledger, i) => {
        let admitted = 0;
        for (let k = 0; k < 5; k++) {
          if ((await ledger.openSession("greedy", `p${i}.${k}`, { limit: 5, now })).admitted) admitted++;
        }
        return admitted;
      }));
      assert.equal(opened.reduce((x, y) => x + y, 0), 5, `opened ${opened.join(" + ")}`);
      assert.deepEqual(await ledgers[0].openSession("greedy", "late", { limit: 5, now }), {
        admitted: false,
        open: 5,
      });

      const held = await Promise.all(ledgers.map((l) => l.claimCalls("caller", { want: 3, limit: 7, now })));
      assert.equal(held.reduce((x, y) => x + y.held, 0), 7, JSON.stringify(held));
      // A replica that leaves gives its places back; the others may take them.
      const leaving = ledgers.findIndex((_, i) => held[i].held > 0);
      await ledgers[leaving].leave();
      const other = ledgers.findIndex((_, i) => i !== leaving && held[i].held < 3);
      const again = await ledgers[other].claimCalls("caller", { want: 3, limit: 7, now });
      assert.equal(again.held, Math.min(3, 7 - (7 - held[leaving].held - held[other].held)));

      const window = { start: 0, end: now + 3_600_000, limit: 101 };
      const granted = await Promise.all(ledgers.map(async (ledger) => {
        let total = 0;
        for (let i = 0; i < 40; i++) total += await ledger.claimRequests("chatty", { ...window, want: 3 });
        return total;
      }));
      assert.equal(granted.reduce((x, y) => x + y, 0), 101, `granted ${granted.join(" + ")}`);
      assert.equal(await ledgers[0].claimRequests("chatty", { ...window, want: 1 }), 0);
      assert.equal(await ledgers[0].claimRequests("other", { ...window, want: 5 }), 5, "per agent");
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  },
);

Deno.test("an unreachable PostgreSQL store: quotas are counted per process, and its password is never printed", async () => {
  await using dir = await tempDir();
  const secret = "quota-s3cret-Zp9w";
  const lines: string[] = [];
  const listener = await replica(
    dir.path,
    `postgres://mcphub:${secret}@127.0.0.1:1/none`,
    {},
    (line) => lines.push(line),
  );
  try {
    const url = `${listener.origin}/mcp`;
    await using greedy = await httpClient(url, TOKENS.TOK_GREEDY, "greedy");
    await sessionRefused(url, TOKENS.TOK_GREEDY);
    assert.ok((await greedy.listTools()).tools.some((t) => t.name === "fx__echo"));
    assert.ok(
      lines.some((line) => /quotas: the shared store cannot be reached .*counting per process/.test(line)),
      lines.join("\n"),
    );
    assert.doesNotMatch(lines.join("\n"), new RegExp(secret));
  } finally {
    await listener.stop();
  }
});
