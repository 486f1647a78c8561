/**
 * The `initialize` answer written before the gateway loads (gateway/initialize.ts, early.ts) is byte for
 * byte the gateway's own: both are driven with the same requests, configs and store, and compared.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import * as sdk from "@modelcontextprotocol/sdk/types.js";
import { loadConfig } from "../../src/config/light.ts";
import { openStore } from "../../src/store/mod.ts";
import { StoreToolCache, toolCacheMigrations } from "../../src/catalog/tool_cache.ts";
import { serverFingerprint } from "../../src/catalog/mod.ts";
import { readCachedInstructions } from "../../src/catalog/cached_instructions.ts";
import { startGateway } from "../../src/gateway/serve.ts";
import { gatewayAnswerer } from "../../src/gateway/early.ts";
import {
  earlyInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "../../src/gateway/initialize.ts";
import { tempDir, writeConfig } from "../helpers.ts";

Deno.test("the protocol versions copied for the early answer are the SDK's", () => {
  assert.equal(LATEST_PROTOCOL_VERSION, sdk.LATEST_PROTOCOL_VERSION);
  assert.deepEqual(SUPPORTED_PROTOCOL_VERSIONS, sdk.SUPPORTED_PROTOCOL_VERSIONS);
});

const CONFIGS = {
  all: `servers:
  alpha:
    command: alpha-server
    description: The first one
  beta:
    command: beta-server
    use_when: [working with beta things]
  gamma:
    command: gamma-server
    enabled: false
`,
  lazy: `expose: lazy
code_mode: false
servers:
  alpha:
    command: alpha-server
    tags: [one, two]
  beta:
    command: beta-server
    use_when: [working with beta things]
agents:
  scoped:
    servers: [alpha]
    code_mode: true
`,
  auto: `expose: auto
expose_budget: 5000
servers:
  alpha:
    command: alpha-server
  beta:
    command: beta-server
    description: Beta
agents:
  exact:
    tools: [beta__one, beta__two]
`,
};

/** `(config, agent)` pairs: each a different instructions text. */
const CASES: [keyof typeof CONFIGS, string | undefined][] = [
  ["all", undefined],
  ["lazy", undefined],
  ["lazy", "scoped"],
  ["auto", undefined],
  ["auto", "exact"],
];

const base = { capabilities: {}, clientInfo: { name: "host", version: "1.0" } };
const REQUESTS: Record<string, unknown>[] = [
  ...[...sdk.SUPPORTED_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01", ""].map((protocolVersion, i) => ({
    jsonrpc: "2.0",
    id: i,
    method: "initialize",
    params: { ...base, protocolVersion },
  })),
  {
    jsonrpc: "2.0",
    id: "a-string-id",
    method: "initialize",
    params: { ...base, protocolVersion: "2025-06-18" },
  },
  { jsonrpc: "2.0", id: "", method: "initialize", params: { ...base, protocolVersion: "2025-03-26" } },
  { jsonrpc: "2.0", id: 2 ** 40, method: "initialize", params: { ...base, protocolVersion: "2025-11-25" } },
  { jsonrpc: "2.0", id: -7, method: "initialize", params: { ...base, protocolVersion: "2024-11-05" } },
  {
    jsonrpc: "2.0",
    id: 3,
    method: "initialize",
    params: {
      ...base,
      protocolVersion: "2025-06-18",
      _meta: { progressToken: "p", "example.com/x": { y: 1 } },
    },
  },
  {
    params: {
      protocolVersion: "2025-11-25",
      clientInfo: {
        name: "rich",
        title: "A Rich Host",
        version: "9",
        websiteUrl: "https://example.com",
        description: "café ☕",
        icons: [{ src: "data:image/png;base64,AA", mimeType: "image/png", sizes: ["48x48"], theme: "dark" }],
      },
      capabilities: {
        roots: { listChanged: true },
        sampling: { context: {}, tools: {} },
        elicitation: { form: {}, url: {} },
        experimental: { thing: {} },
        extensions: { "example.com/ext": {} },
        unknownCapability: 5,
      },
      unknownParam: true,
    },
    method: "initialize",
    id: 4,
    jsonrpc: "2.0",
  },
];

/** What a gateway session of `startGateway` writes first when `request` is all its host sends. */
async function gatewayAnswer(
  options: { config: Awaited<ReturnType<typeof loadConfig>>; agent?: string; storePath: string },
  request: unknown,
): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  const answered = Promise.withResolvers<void>();
  let input!: ReadableStreamDefaultController<Uint8Array>;
  const running = startGateway({
    ...options,
    env: {},
    version: "1.2.3",
    log: () => {},
    input: new ReadableStream({
      start(controller) {
        input = controller;
        controller.enqueue(new TextEncoder().encode(`${JSON.stringify(request)}\n`));
      },
    }),
    output: new WritableStream({
      write(chunk) {
        text += decoder.decode(chunk, { stream: true });
        if (text.includes("\n")) answered.resolve();
      },
    }),
  });
  // The host's stdin ends once the answer is out (an end before it would stop the session first).
  await answered.promise;
  input.close();
  await running.done;
  return text.slice(0, text.indexOf("\n") + 1);
}

Deno.test("the early initialize answer is byte for byte the gateway's, for every config, scope and request", async () => {
  await using dir = await tempDir("mcphub-early-");
  for (const [name, agent] of CASES) {
    const path = await writeConfig(dir.path, CONFIGS[name], `${name}.yaml`);
    const config = await loadConfig(path, { env: { get: () => undefined }, cwd: dir.path, agent });
    const storePath = `${dir.path}/${name}-${agent ?? "all"}.db`;
    // The servers' instructions as a past run cached them (beta's under another fingerprint: not used).
    const db = openStore(storePath, { migrations: toolCacheMigrations });
    const cache = new StoreToolCache(db);
    for (const server of config.servers) {
      const fingerprint = server.name === "beta" ? "stale" : serverFingerprint(server);
      await cache.save(server.name, fingerprint, []);
      cache.saveInstructions(server.name, fingerprint, `Use ${server.name} well.\nSecond line.`);
    }
    await cache.flush();
    db.close();
    if (name === "all") {
      assert.deepEqual(
        [...readCachedInstructions(storePath, config.servers)!],
        [["alpha", "Use alpha well.\nSecond line."], ["gamma", "Use gamma well.\nSecond line."]],
      );
    }
    const answer = gatewayAnswerer({ config, agent, storePath, version: "1.2.3" });
    for (const request of REQUESTS) {
      const parts = earlyInitializeRequest(request);
      assert.ok(parts, JSON.stringify(request));
      const early = answer(parts);
      const gateway = await gatewayAnswer({ config, agent, storePath }, request);
      assert.equal(early, gateway, `${name} ${agent}: ${JSON.stringify(request)}`);
    }
  }
});

Deno.test("a new store (no file yet) and no store give the gateway's answer too", async () => {
  await using dir = await tempDir("mcphub-early-");
  const path = await writeConfig(dir.path, CONFIGS.all);
  const config = await loadConfig(path, { env: { get: () => undefined }, cwd: dir.path });
  const request = REQUESTS[1]!;
  for (const storePath of [`${dir.path}/new.db`, ":memory:"]) {
    const early = gatewayAnswerer({ config, storePath, version: "1.2.3" })(earlyInitializeRequest(request)!);
    assert.equal(early, await gatewayAnswer({ config, storePath: `${dir.path}/other-new.db` }, request));
  }
});

Deno.test("an unknown agent or an unreadable store is left to the gateway", async () => {
  await using dir = await tempDir("mcphub-early-");
  const path = await writeConfig(dir.path, CONFIGS.all);
  const config = await loadConfig(path, { env: { get: () => undefined }, cwd: dir.path });
  const parts = earlyInitializeRequest(REQUESTS[0])!;
  assert.equal(
    gatewayAnswerer({ config, agent: "nobody", storePath: ":memory:", version: "1" })(parts),
    undefined,
  );
  await Deno.writeTextFile(`${dir.path}/not.db`, "this is not an SQLite database, it is plain text.");
  assert.equal(gatewayAnswerer({ config, storePath: `${dir.path}/not.db`, version: "1" })(parts), undefined);
  // A directory where the file should be.
  assert.equal(gatewayAnswerer({ config, storePath: dir.path, version: "1" })(parts), undefined);
});

Deno.test("only a plain, well-formed initialize request is answered early", () => {
  const ok = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { ...base, protocolVersion: "2025-06-18" },
  };
  assert.deepEqual(earlyInitializeRequest(ok), { id: 1, protocolVersion: "2025-06-18" });
  const with_ = (change: Record<string, unknown>, params?: Record<string, unknown>) => ({
    ...ok,
    ...change,
    params: { ...ok.params, ...params },
  });
  const refused: unknown[] = [
    null,
    [ok],
    "initialize",
    { ...ok, id: undefined },
    with_({ id: 1.5 }),
    with_({ id: null }),
    with_({ id: 2 ** 60 }),
    with_({ jsonrpc: "1.0" }),
    with_({ method: "server/discover" }),
    with_({ extra: 1 }),
    { jsonrpc: "2.0", method: "initialize", params: ok.params },
    { ...ok, params: undefined },
    with_({}, { protocolVersion: 20250618 }),
    with_({}, { capabilities: undefined }),
    with_({}, { capabilities: [] }),
    with_({}, { clientInfo: { name: "x" } }),
    with_({}, { clientInfo: { name: "x", version: 1 } }),
    with_({}, { clientInfo: { name: "x", version: "1", icons: [{ src: "a", theme: "blue" }] } }),
    with_({}, { capabilities: { roots: { listChanged: "yes" } } }),
    with_({}, { capabilities: { roots: true } }),
    with_({}, { capabilities: { sampling: { context: true } } }),
    with_({}, { capabilities: { elicitation: { form: { applyDefaults: true } } } }),
    with_({}, { capabilities: { tasks: {} } }),
    with_({}, { capabilities: { experimental: { x: 1 } } }),
    with_({}, { task: { ttl: 1 } }),
    with_({}, { _meta: { progressToken: 1.5 } }),
    with_({}, { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } }),
    with_({}, { _meta: "m" }),
  ];
  for (const value of refused) assert.equal(earlyInitializeRequest(value), undefined, JSON.stringify(value));
});
