/**
 * The process-wide JSON guard (src/json/guard.ts): JSON.parse's semantics (reviver included) in an isolate
 * where V8's JSON.parse reads escaped keys wrong, installed by `mcp serve` before anything parses, and end
 * to end: a hostile HTTP downstream's poison (Streamable HTTP with JSON and with SSE answers, the older
 * HTTP+SSE transport) does not corrupt another HTTP server's escaped keys that the SDK parses in the
 * gateway.
 *
 * This file installs the guard in its own isolate too: its SDK clients parse what the gateway and the
 * fixture send, poison included, and must read the answers right to compare them.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { guardedJsonParse, installJsonGuard, jsonGuardInstalled } from "../../src/json/mod.ts";
import { nativeParse } from "../../src/json/safe_json.ts";
import {
  connectGateway,
  DENO,
  prng,
  q,
  ROOT,
  startHostileHttp,
  structured,
  tempDir,
  until,
  writeConfig,
} from "../helpers.ts";

const R = String.raw;
const NATIVE_JSON = Response.prototype.json;

installJsonGuard();

// ---------------------------------------------------------------------------------------------------
// guardedJsonParse: JSON.parse's semantics.

/** Poisons V8's JSON.parse of the escaped keys used below (see safe_json_test.ts). */
function poison(): void {
  nativeParse(R`{"a":1,"\\":2}`);
  nativeParse(R`{"zq":"e","caf\\":1}`);
  nativeParse(R`{"k":"e","\\":1}`);
}

Deno.test("installed: JSON.parse, Response/Request.json() read escaped keys right in a poisoned isolate", async () => {
  poison();
  assert.equal(jsonGuardInstalled(), true);
  const victim = R`{"a":3,"\u0041":4}`;
  assert.deepEqual(Object.keys(JSON.parse(victim)), ["a", "A"]);
  assert.deepEqual(Object.keys(await new Response(victim).json()), ["a", "A"]);
  const request = new Request("http://127.0.0.1/", { method: "POST", body: victim });
  assert.deepEqual(Object.keys(await request.json()), ["a", "A"]);
  // Informational, as in safe_json_test.ts: the native Body.json() of this Deno.
  const native = Object.keys(await NATIVE_JSON.call(new Response(victim)));
  console.log(`note: the native Response.json() gives the keys ${JSON.stringify(native)}`);
});

Deno.test("installed: the properties keep their attributes, names and lengths; installing again changes nothing", () => {
  const parse = JSON.parse;
  const json = Response.prototype.json;
  installJsonGuard();
  assert.equal(JSON.parse, parse);
  assert.equal(Response.prototype.json, json);
  assert.equal(Request.prototype.json, json);
  assert.deepEqual(Object.getOwnPropertyDescriptor(JSON, "parse"), {
    value: parse,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  assert.equal(Object.getOwnPropertyDescriptor(Response.prototype, "json")!.enumerable, true);
  assert.deepEqual([JSON.parse.name, JSON.parse.length], ["parse", 2]);
  assert.deepEqual([json.name, json.length], ["json", 0]);
  assert.notEqual(nativeParse, JSON.parse);
});

Deno.test("guardedJsonParse: ToString of the text, SyntaxError, TypeError, body errors, as JSON.parse", async () => {
  assert.deepEqual(JSON.parse({ toString: () => R`{"\u0041":[1]}` } as unknown as string), { A: [1] });
  assert.equal(JSON.parse(1 as unknown as string), 1);
  assert.equal(JSON.parse(null as unknown as string), null);
  assert.throws(() => JSON.parse(undefined as unknown as string), SyntaxError);
  assert.throws(() => JSON.parse(Symbol() as unknown as string), TypeError);
  for (const text of [R`{"\u0041":}`, R`{"\u0041":1`, R`{"\u0041":1}x`, "", "{", R`{"\u00":1}`]) {
    assert.throws(() => JSON.parse(text), SyntaxError, text);
    await assert.rejects(new Response(text).json(), SyntaxError, text);
  }
  const used = new Response("{}");
  await used.text();
  await assert.rejects(used.json(), TypeError);
  // A byte-order mark is dropped by json() as by text().
  const bom = new TextEncoder().encode(`\ufeff${R`{"\u0041":1}`}`);
  assert.deepEqual(await new Response(bom).json(), { A: 1 });
  // A non-callable reviver is ignored.
  assert.deepEqual(guardedJsonParse(R`{"\u0041":1}`, 3), { A: 1 });
});

/** A reviver that records what it sees (holder keys, key, value, context) and changes numbers and keys. */
function recordingReviver(log: unknown[]) {
  return function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
    log.push([Object.keys(this as object), key, JSON.stringify(value), context]);
    if (key === "drop") return undefined;
    if (typeof value === "number") return value + 1;
    if (key === "grow" && value && typeof value === "object") {
      // Adding to the holder while it is walked: InternalizeJSONProperty took its keys before.
      (this as Record<string, unknown>).late = 1;
    }
    if (key === "swap") (this as Record<string, unknown>).after = "changed";
    return value;
  };
}

const SAFE_KEYS = ["a", "b", "drop", "grow", "swap", "after", "0", "7", "__proto__", "é", "中", "x y", ""];

/** A random value whose keys need no escape (so V8 reads the unescaped text right, poisoned or not). */
function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 3 || r < 0.3) {
    const s = rand();
    if (s < 0.3) return Math.floor(rand() * 200) - 100;
    if (s < 0.4) return rand() * 1e-3;
    if (s < 0.5) return rand() < 0.5;
    if (s < 0.6) return null;
    return ["", "x", 'q"', "\\", "é", "\n"][Math.floor(rand() * 6)];
  }
  if (r < 0.55) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) {
    const k = SAFE_KEYS[Math.floor(rand() * SAFE_KEYS.length)]!;
    Object.defineProperty(o, k, {
      value: randomValue(rand, depth + 1),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return o;
}

/** `JSON.stringify(value)` with every key's characters written as \u escapes. */
function escapeKeys(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(escapeKeys).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${
      Object.keys(value).map((k) =>
        `"${[...k].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}":${
          escapeKeys((value as Record<string, unknown>)[k])
        }`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value);
}

Deno.test("guardedJsonParse with a reviver: same calls, holders, contexts and result as V8 on the unescaped text", () => {
  poison();
  const rand = prng(7);
  let walked = 0;
  for (let i = 0; i < 1500; i++) {
    const value = { k: randomValue(rand, 0), [SAFE_KEYS[i % SAFE_KEYS.length]!]: randomValue(rand, 0) };
    const plain = JSON.stringify(value);
    const escaped = escapeKeys(value);
    const ours: unknown[] = [];
    const theirs: unknown[] = [];
    const result = guardedJsonParse(escaped, recordingReviver(ours));
    const expected = nativeParse(plain, recordingReviver(theirs) as (k: string, v: unknown) => unknown);
    assert.deepStrictEqual(result, expected, escaped);
    assert.equal(JSON.stringify(ours), JSON.stringify(theirs), escaped);
    walked += ours.length;
  }
  assert.ok(walked > 10_000, `${walked} reviver calls`);
});

Deno.test("guardedJsonParse with a reviver walks 100,000 levels without recursion", () => {
  const depth = 100_000;
  let calls = 0;
  const value = guardedJsonParse(
    "[".repeat(depth) + R`{"\u0041":1}` + "]".repeat(depth),
    (_k: string, v: unknown) => {
      calls++;
      return typeof v === "number" ? v * 2 : v;
    },
  );
  let v: unknown = value;
  for (let i = 0; i < depth; i++) v = (v as unknown[])[0];
  assert.deepEqual(v, { A: 2 });
  assert.equal(calls, depth + 2);
});

// ---------------------------------------------------------------------------------------------------
// `mcp serve` installs the guard first.

Deno.test("main.ts imports the guard before any other module, and importing it installs the guard", async () => {
  const main = await Deno.readTextFile(`${ROOT}main.ts`);
  const imports = [...main.matchAll(/^import\s[^;]*?["']([^"']+)["'];/gm)].map((m) => m[1]);
  assert.equal(imports[0], "./src/json/install.ts", imports.join());
  const install = await Deno.readTextFile(`${ROOT}src/json/install.ts`);
  assert.deepEqual([...install.matchAll(/^import\s[^;]*?["']([^"']+)["'];/gm)].map((m) => m[1]), [
    "./guard.ts",
  ]);
  const probe = `
    const before = JSON.parse;
    const json = Response.prototype.json;
    await import(${JSON.stringify(`file://${ROOT}main.ts`)});
    const native = JSON.parse[Symbol.for("mcphub.json.nativeParse")];
    console.log(JSON.stringify([native === before, Response.prototype.json !== json,
      Object.keys(JSON.parse(${JSON.stringify(R`{"a":1,"\\":2}`)})), Object.keys(JSON.parse(${
    JSON.stringify(R`{"a":3,"\u0041":4}`)
  }))]));
  `;
  const out = await new Deno.Command(DENO, { args: ["eval", probe], stdout: "piped", stderr: "piped" })
    .output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), [true, true, ["a", "\\"], ["a", "A"]]);
});

/** Runs `code` in a fresh isolate (`deno eval`, all permissions); answers the JSON it prints. */
async function freshIsolate(code: string): Promise<unknown> {
  const out = await new Deno.Command(DENO, { args: ["eval", code], stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

const INSTALL = JSON.stringify(`file://${ROOT}src/json/install.ts`);
const MOD = JSON.stringify(`file://${ROOT}src/json/mod.ts`);
/** In a probe: whether `Response.prototype.json` and `Request.prototype.json` are the guard's. */
const GUARDED = `[Response, Request].map((c) => String(c.prototype.json).includes("guardedJsonParse"))`;

Deno.test("lazily installed: fetch's first call guards the bodies before any response is made, and puts the globals back", async () => {
  const url = `data:application/json,${encodeURIComponent(R`{"a":3,"\u0041":4}`)}`;
  const probe = `
    await import(${INSTALL});
    const lazy = (name) => Object.getOwnPropertyDescriptor(globalThis, name);
    const standIn = [lazy("Response").get, lazy("Request").get, lazy("fetch").value]
      .map((f) => f[Symbol.for("mcphub.json.lazyBodyGuard")] === true);
    // No global Response or Request touched: fetch makes the response from Deno's own class.
    const res = await fetch(${JSON.stringify(url)});
    const own = String(res.json).includes("guardedJsonParse");
    const keys = Object.keys(await res.json());
    const back = [lazy("Response").get, lazy("Request").get, lazy("fetch").value]
      .map((f) => f[Symbol.for("mcphub.json.lazyBodyGuard")] === undefined);
    console.log(JSON.stringify([standIn, own, keys, back, ${GUARDED}]));
  `;
  assert.deepEqual(await freshIsolate(probe), [
    [true, true, true],
    true,
    ["a", "A"],
    [true, true, true],
    [true, true],
  ]);
});

Deno.test("lazily installed: the first use of Response or Request guards both; guardBodies() covers Deno.serve's requests", async () => {
  const viaGlobal = `
    await import(${INSTALL});
    const json = new Request("http://127.0.0.1/", { method: "POST", body: "{}" }).json;
    console.log(JSON.stringify([String(json).includes("guardedJsonParse"), ${GUARDED}]));
  `;
  assert.deepEqual(await freshIsolate(viaGlobal), [true, [true, true]]);
  // Deno.serve makes its requests without the globals: the listener calls guardBodies() first.
  const served = `
    const { guardBodies } = await import(${MOD});
    await import(${INSTALL});
    guardBodies();
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) =>
      new Response(JSON.stringify([
        String(request.json).includes("guardedJsonParse"),
        Object.keys(await request.json()),
      ])));
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    const body = ${JSON.stringify(R`{"a":3,"\u0041":4}`)};
    await conn.write(new TextEncoder().encode(
      "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: " + body.length + "\\r\\nConnection: close\\r\\n\\r\\n" + body));
    let text = "";
    for await (const chunk of conn.readable) text += new TextDecoder().decode(chunk);
    await server.shutdown();
    console.log(JSON.stringify([text.slice(text.indexOf("\\r\\n\\r\\n") + 4), ${GUARDED}]));
  `;
  assert.deepEqual(await freshIsolate(served), ['[true,["a","A"]]', [true, true]]);
});

// ---------------------------------------------------------------------------------------------------
// End to end: the hostile fixture over HTTP as a downstream of `mcp serve`.

const ARGS = { zq: "e", "café": "x" };

const TRANSPORTS = [
  { label: "Streamable HTTP, JSON answers", path: "/mcp", sse: false },
  { label: "Streamable HTTP, SSE answers", path: "/mcp-sse", sse: false },
  { label: "HTTP+SSE", path: "/sse", sse: true },
];

for (const { label, path, sse } of TRANSPORTS) {
  Deno.test(`${label}: a hostile downstream's poison does not corrupt another server's escaped keys`, async () => {
    await using fixture = await startHostileHttp(["--mode", "poison"]);
    const url = `http://127.0.0.1:${fixture.port}${path}`;
    // Direct: what a client that reads JSON right gets from the server.
    const client = new Client({ name: "direct", version: "1" });
    await client.connect(
      sse ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url)),
    );
    const direct = await client.callTool({ name: "args", arguments: ARGS });
    await client.close();
    assert.deepEqual(direct, {
      content: [{ type: "text", text: JSON.stringify(["zq", "café"]) }],
      structuredContent: ARGS,
    });

    await using dir = await tempDir();
    const server = (name: string) => `  ${name}:\n    url: ${q(url)}\n${sse ? "    transport: sse\n" : ""}`;
    const config = await writeConfig(dir.path, `servers:\n${server("evil")}${server("mirror")}`);
    await using gw = await connectGateway(config, { allowAll: true });
    await until("both servers connected", async () => {
      const { servers } = structured<{ servers: { state: string }[] }>(
        await gw.client.callTool({ name: "list_servers", arguments: {} }),
      );
      return servers.every((s) => s.state === "connected") ? true : undefined;
    });
    // The poison crosses the gateway (its key with a backslash arrives intact)...
    const poisoned = await gw.client.callTool({ name: "evil__poison", arguments: {} });
    assert.deepEqual(Object.keys((poisoned._meta as { p: object }).p), ["zq", "caf\\"], gw.stderr());
    // ...and the other server's escaped keys, parsed by the SDK in the gateway, come out right.
    const answer = await gw.client.callTool({ name: "mirror__args", arguments: ARGS });
    assert.deepEqual(answer, direct, gw.stderr());
    assert.deepEqual(Object.keys(answer.structuredContent as object), ["zq", "café"]);
  });
}
