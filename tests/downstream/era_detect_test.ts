/**
 * Each downstream's era found on its first connection and kept in the store per server fingerprint: a
 * server of unknown era is opened with `server/discover` on stdio as over HTTP (as the v2 client's `auto`
 * mode does). A stdio server that serves both revisions (tests/fixtures/modern_server.ts `--legacy`: the
 * v2 server package, `legacy: 'serve'`) is then spoken to in 2026-07-28, as a direct v2 client pinned to
 * it is; legacy servers answer the probe with an error and get the 2025 `initialize` after it, on the
 * same process; a server that exits on the probe is started once more with the 2025 opening, in the
 * same attempt, and is not reported as failed. An era cached `legacy` before servers of unknown era were
 * probed first (no `probed` mark on its row) is probed once more.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport as ModernStdio } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import {
  connectGateway,
  DENO,
  FIXTURE,
  HOSTILE,
  q,
  REAL,
  ROOT,
  serversReady,
  startHttpServer,
  tempDir,
  writeConfig,
} from "../helpers.ts";

const MODERN = `${ROOT}tests/fixtures/modern_server.ts`;

/** The store's era rows as `[era, probed]`, in the order of their era. */
function storedEras(db: string): [string, number][] {
  const store = new DatabaseSync(db, { readOnly: true });
  try {
    return (store.prepare("SELECT era, probed FROM server_era ORDER BY era").all() as {
      era: string;
      probed: number;
    }[]).map((r) => [r.era, r.probed]);
  } finally {
    store.close();
  }
}

/** Lines of a file the fixtures append to (empty when it does not exist yet), from line `from` on. */
async function lines(file: string, from = 0): Promise<string[]> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return text.split("\n").filter(Boolean).slice(from);
}

const text = (result: unknown) =>
  (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

Deno.test("a stdio server serving both revisions is found modern on first contact and spoken to in 2026-07-28, as direct", async () => {
  await using dir = await tempDir();
  const log = `${dir.path}/methods.log`;
  const db = `${dir.path}/store.db`;
  const path = await writeConfig(
    dir.path,
    `servers:\n  dual:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(MODERN)}, --legacy, --log, ${
      q(log)
    }]\n`,
  );
  const host = new Client({ name: "host", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} } },
  });
  host.setRequestHandler(
    ElicitRequestSchema,
    () => ({ action: "accept" as const, content: { name: "Ada" } }),
  );
  await using gw = await connectGateway(path, { allowAll: true, db, client: host });
  const rows = await serversReady(gw.client);
  assert.deepEqual(rows.map((r) => [r.name, r.state, r.error]), [["dual", "connected", undefined]]);
  // Probed first, answered: no 2025 initialize reached it (it would have accepted one).
  const methods = await lines(log);
  assert.equal(methods[0], "server/discover");
  assert.ok(!methods.includes("initialize"), methods.join(","));
  assert.deepEqual(storedEras(db), [["modern", 1]]);

  // The baseline: the v2 client pinned to 2026-07-28, straight to the same server.
  const direct = new ModernClient(
    { name: "direct", version: "2.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } },
  );
  direct.setRequestHandler("elicitation/create", () => ({ action: "accept", content: { name: "Ada" } }));
  await direct.connect(
    new ModernStdio({ command: DENO, args: ["run", "-A", MODERN, "--legacy"], stderr: "ignore" }),
  );
  try {
    assert.equal(direct.getNegotiatedProtocolVersion(), "2026-07-28");
    const through = (await gw.client.listTools()).tools.filter((t) => t.name.startsWith("dual__"));
    const straight = (await direct.listTools()).tools;
    assert.deepEqual(
      through.map((t) => ({
        ...t,
        name: t.name.slice("dual__".length),
        description: t.description!.slice(7),
      })),
      straight,
    );
    for (
      const [name, args] of [["echo", { text: "é ✓" }], ["add", { a: 20, b: 22 }], ["ask", {
        question: "Who?",
      }]] as const
    ) {
      const a = await gw.client.callTool({ name: `dual__${name}`, arguments: args });
      const b = await direct.callTool({ name, arguments: args });
      assert.deepEqual(a.content, b.content, name);
    }
    assert.equal(
      text(await gw.client.callTool({ name: "dual__ask", arguments: { question: "?" } })),
      "answer: Ada",
    );
  } finally {
    await direct.close();
  }
  // Every request after the probe went in the 2026-07-28 way (the 2025 lifecycle never began).
  assert.ok(!(await lines(log)).includes("notifications/initialized"));
});

Deno.test("legacy stdio servers on first contact: the probe is answered with an error, the 2025 opening follows at once; cached legacy", async () => {
  await using dir = await tempDir();
  const db = `${dir.path}/store.db`;
  const files = `${dir.path}/files`;
  await Deno.mkdir(files);
  // A connect timeout of 10 minutes: a probe left unanswered would wait 5 (a legacy server that answers
  // costs one round trip, not the probe's bound).
  const path = await writeConfig(
    dir.path,
    `connect_timeout: 600s
servers:
  everything:
    command: node
    args: [${q(REAL.everything)}, stdio]
  memory:
    command: node
    args: [${q(REAL.memory)}]
    env: { MEMORY_FILE_PATH: ${q(`${dir.path}/memory.jsonl`)} }
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(files)}]
  v1:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
  raw:
    command: ${q(DENO)}
    args: [run, -A, ${q(HOSTILE)}, --mode, env]
`,
  );
  await using gw = await connectGateway(path, { allowAll: true, db });
  const rows = await serversReady(gw.client, { ms: 60_000 });
  assert.deepEqual(rows.map((r) => [r.name, r.state, r.error]).sort(), [
    ["everything", "connected", undefined],
    ["filesystem", "connected", undefined],
    ["memory", "connected", undefined],
    ["raw", "connected", undefined],
    ["v1", "connected", undefined],
  ]);
  assert.deepEqual(storedEras(db), Array(5).fill(["legacy", 1]));
  // No fall-back was needed: each answered the probe.
  assert.doesNotMatch(gw.stderr(), /the probe for MCP 2026-07-28 failed/);
  const tools = (await gw.client.listTools()).tools.map((t) => t.name);
  for (const server of ["everything", "memory", "filesystem", "v1", "raw"]) {
    assert.ok(tools.some((t) => t.startsWith(`${server}__`)), server);
  }
});

Deno.test("a server that exits on a request before initialize: connects on first contact in the same attempt, not reported as failed", async () => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  await Deno.mkdir(state);
  const db = `${dir.path}/store.db`;
  const path = await writeConfig(
    dir.path,
    `servers:\n  strict:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(HOSTILE)
    }, --mode, strict, --state, ${q(state)}]\n`,
  );
  {
    await using gw = await connectGateway(path, { allowAll: true, db });
    const [row] = await serversReady(gw.client);
    assert.equal(row!.state, "connected", row!.error);
    assert.equal(row!.error, undefined);
    assert.equal(row!.failures ?? 0, 0);
    // The probe cost its process; the second one got the 2025 opening and serves.
    assert.equal((await lines(`${state}/starts`)).length, 2);
    assert.deepEqual((await lines(`${state}/methods`)).slice(0, 2), ["server/discover", "initialize"]);
    assert.equal(text(await gw.client.callTool({ name: "strict__ok", arguments: {} })), "ok");
    assert.doesNotMatch(gw.stderr(), /failed to start/);
    assert.deepEqual(storedEras(db), [["legacy", 1]]);
  }
  // Known now: the 2025 opening first, one process.
  const before = (await lines(`${state}/methods`)).length;
  await using gw = await connectGateway(path, { allowAll: true, db });
  const [row] = await serversReady(gw.client);
  assert.equal(row!.state, "connected", row!.error);
  assert.equal((await lines(`${state}/starts`)).length, 3);
  assert.equal((await lines(`${state}/methods`, before))[0], "initialize");
});

Deno.test("an HTTP server serving both revisions cached legacy before servers were probed first: probed once more, then modern", async () => {
  await using dir = await tempDir();
  const log = `${dir.path}/methods.log`;
  const db = `${dir.path}/store.db`;
  await using server = await startHttpServer(MODERN, ["--http", "--legacy", "--log", log], {
    what: "the dual-era fixture",
    stderr: "null",
  });
  const path = await writeConfig(
    dir.path,
    `servers:\n  dual:\n    url: ${q(`http://127.0.0.1:${server.port}/mcp`)}\n`,
  );
  // The methods the server received from one gateway run, from its opening on.
  const run = async () => {
    const before = (await lines(log)).length;
    await using gw = await connectGateway(path, { allowAll: true, db });
    const [row] = await serversReady(gw.client);
    assert.equal(row!.state, "connected", row!.error);
    const since = await lines(log, before);
    return since.slice(since.findIndex((m) => m === "server/discover" || m === "initialize"));
  };
  const rewrite = (era: string, probed: number) => {
    const store = new DatabaseSync(db);
    try {
      store.prepare("UPDATE server_era SET era = ?, probed = ?").run(era, probed);
    } finally {
      store.close();
    }
  };
  assert.equal((await run())[0], "server/discover");
  assert.deepEqual(storedEras(db), [["modern", 1]]);
  // As a gateway from before wrote it (the 2025 opening first, accepted): legacy, no probe behind it.
  rewrite("legacy", 0);
  let methods = await run();
  assert.equal(methods[0], "server/discover");
  assert.ok(!methods.includes("initialize"), methods.join(","));
  assert.deepEqual(storedEras(db), [["modern", 1]]);
  // A legacy era found by a probe is trusted: the 2025 opening first, and the server accepts it.
  rewrite("legacy", 1);
  methods = await run();
  assert.equal(methods[0], "initialize");
  assert.ok(!methods.includes("server/discover"), methods.join(","));
  assert.deepEqual(storedEras(db), [["legacy", 1]]);
});

Deno.test("a server the probe leaves unable to answer (alive): the next attempt opens in the 2025 way and connects; never probed again", async () => {
  await using dir = await tempDir();
  const state = `${dir.path}/state`;
  await Deno.mkdir(state);
  const db = `${dir.path}/store.db`;
  // A short connect timeout: the first attempt (the probe, then the initialize it leaves unanswered) ends.
  const path = await writeConfig(
    dir.path,
    `connect_timeout: 4s\nservers:\n  wedge:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(HOSTILE)
    }, --mode, wedge, --state, ${q(state)}]\n`,
  );
  {
    await using gw = await connectGateway(path, { allowAll: true, db });
    const [row] = await serversReady(gw.client, { state: "connected", ms: 60_000 });
    assert.equal(row!.error, undefined);
    // The first process got the probe (and the initialize after it, unanswered); the next attempt the
    // 2025 opening (on a loaded machine an attempt may time out more than once: the probe is sent once).
    assert.ok((await lines(`${state}/starts`)).length >= 2);
    const methods = await lines(`${state}/methods`);
    assert.deepEqual(methods.slice(0, 2), ["server/discover", "initialize"]);
    assert.equal(methods.filter((m) => m === "server/discover").length, 1, methods.join(","));
    assert.ok(methods.slice(2).includes("initialize"), methods.join(","));
    assert.equal(text(await gw.client.callTool({ name: "wedge__ok", arguments: {} })), "ok");
    assert.deepEqual(storedEras(db), [["legacy", 1]]);
  }
  // The next gateway knows it: the 2025 opening at once, one process.
  const before = (await lines(`${state}/methods`)).length;
  await using gw = await connectGateway(path, { allowAll: true, db });
  await serversReady(gw.client, { state: "connected", ms: 60_000 });
  const since = await lines(`${state}/methods`, before);
  assert.equal(since[0], "initialize");
  assert.ok(!since.includes("server/discover"), since.join(","));
});
