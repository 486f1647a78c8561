/**
 * parseJson(): JSON.parse's value, even in an isolate where V8's JSON.parse reads escaped keys wrong
 * (https://issues.chromium.org/issues/521080746), and linear on adversarial input.
 */
import assert from "node:assert/strict";
import { hasEscapedKey, parseJson } from "../../src/json/mod.ts";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { StdioServerTransport } from "../../src/gateway/stdio_server.ts";
import { DENO, HOSTILE, prng } from "../helpers.ts";
import { mibInputs } from "./_mib_inputs.ts";

const R = String.raw;

/** Keys of a JSON value and all its objects, in order, as one comparable text (JSON.stringify's order). */
function shape(value: unknown): string {
  return JSON.stringify(value);
}

/** Every object in `value` has Object.prototype, every own key enumerable data. */
function assertPlain(value: unknown): void {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === "object") {
      assert.equal(Object.getPrototypeOf(v), Object.prototype);
      for (const k of Object.keys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, k)!;
        assert.ok(d.enumerable && d.writable && d.configurable && "value" in d, `key ${k}`);
        stack.push(d.value);
      }
    }
  }
}

Deno.test("after a poisoning parse, parseJson reads escaped keys right (native JSON.parse: see the note)", () => {
  const cases: [string, string, string[]][] = [
    [R`{"a":1,"\\":2}`, R`{"a":3,"\u0041":4}`, ["a", "A"]],
    [R`{"b":1,"x\\":2}`, R`{"b":3,"x\u0041":4}`, ["b", "xA"]],
    [R`{"n":"e","caf\\":1}`, R`{"n":"e","caf\u00e9":2}`, ["n", "café"]],
    [R`{"k":"e","a\\":1}`, R`{"k":"e","a\"":2}`, ["k", 'a"']],
    [R`{"q":"e","\\":1}`, R`{"q":"e","\n":2}`, ["q", "\n"]],
  ];
  const wrong: string[] = [];
  for (const [poison, victim, keys] of cases) {
    JSON.parse(poison);
    const native = Object.keys(JSON.parse(victim) as object);
    if (JSON.stringify(native) !== JSON.stringify(keys)) wrong.push(`${victim} -> ${JSON.stringify(native)}`);
    assert.deepEqual(Object.keys(parseJson(victim) as object), keys, victim);
    // Nested too, and the value under the key is the victim's.
    const nested = parseJson(`[${victim},{"o":${victim}}]`) as Record<string, Record<string, unknown>>[];
    assert.deepEqual(Object.keys(nested[0]!), keys);
    assert.deepEqual(Object.keys(nested[1]!.o!), keys);
  }
  // Informational: whether this V8 still has the bug (the test passes either way).
  console.log(
    wrong.length
      ? `note: native JSON.parse still misreads escaped keys after poisoning (${wrong.length}/${cases.length}): ${
        wrong[0]
      }`
      : "note: native JSON.parse reads every poisoned case right: the V8 bug looks fixed",
  );
});

Deno.test("hasEscapedKey() finds escaped keys and only those", () => {
  const yes = [
    R`{"\u0041":1}`,
    R`{"a":{"b\"":1}}`,
    R`[1,{"\\" : 2}]`,
    R`{"x":"\\","\n"  :1}`,
    R`{"a":"\"\\\"", "\/":0}`,
  ];
  const no = [
    `{"a":1}`,
    R`{"a":"\\"}`,
    R`["\u0041", {"b": "\":"}]`,
    R`{"a":"x\":y","b":"\\\\"}`,
    R`"\\" :`.slice(0, 4),
    "",
    '"\\',
  ];
  // Around the 512 escapes that one step of the scan reads (src/json/safe_json.ts STRING_RUN).
  for (const n of [511, 512, 513, 1024, 1025]) {
    for (const escape of ['\\"', "\\\\", "\\u0041"]) {
      yes.push(`{"${escape.repeat(n)}":1}`, `{"a":"${escape.repeat(n)}","${escape}":1}`);
      no.push(`{"a":"${escape.repeat(n)}"}`, `{"a":"${escape.repeat(n)}","b":":"}`, `"${escape.repeat(n)}\\`);
    }
  }
  for (const t of yes) assert.equal(hasEscapedKey(t), true, t);
  for (const t of no) assert.equal(hasEscapedKey(t), false, t);
});

// ---------------------------------------------------------------------------------------------------
// Random values with escaped keys.

const KEY_BITS = [
  "a",
  "Z",
  "0",
  "7",
  " ",
  '"',
  "\\",
  "/",
  "\n",
  "\u0001",
  "é",
  "€",
  "中",
  "😀",
  "\ud800",
  "\udfff",
  "_",
];
const SPECIAL_KEYS = [
  "__proto__",
  "0",
  "1",
  "42",
  "4294967294",
  "4294967295",
  "-1",
  "01",
  "constructor",
  "toString",
  "",
];

function randomKey(rand: () => number): string {
  if (rand() < 0.15) return SPECIAL_KEYS[Math.floor(rand() * SPECIAL_KEYS.length)]!;
  let k = "";
  const n = Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) k += KEY_BITS[Math.floor(rand() * KEY_BITS.length)]!;
  return k;
}

/** Sets `key` on `target` as JSON.parse does. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 4 || r < 0.35) {
    const s = rand();
    if (s < 0.2) return Math.floor(rand() * 2000) - 1000;
    if (s < 0.35) return (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20);
    if (s < 0.45) return rand() < 0.5;
    if (s < 0.5) return null;
    return randomKey(rand);
  }
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  const o: Record<string, unknown> = {};
  const n = Math.floor(rand() * 6);
  for (let i = 0; i < n; i++) {
    const k = randomKey(rand);
    if (!Object.hasOwn(o, k)) put(o, k, randomValue(rand, depth + 1));
  }
  return o;
}

/** A JSON string literal of `s` with escapes forced at random (\uXXXX, short escapes) and raw elsewhere. */
function quote(s: string, rand: () => number): string {
  let out = '"';
  for (const c of s.split("")) {
    const code = c.charCodeAt(0);
    const hex = code.toString(16).padStart(4, "0");
    const u = `\\u${rand() < 0.5 ? hex : hex.toUpperCase()}`;
    const short = c === "/" ? "\\/" : JSON.stringify(c).slice(1, -1);
    if (c === '"' || c === "\\" || code < 0x20 || rand() < 0.4) {
      out += rand() < 0.5 && short.startsWith("\\") ? short : u;
    } else out += c;
  }
  return out + '"';
}

function space(rand: () => number): string {
  return rand() < 0.7 ? "" : [" ", "\n", "\t", "\r", "  "][Math.floor(rand() * 5)]!;
}

/** JSON text of `value` with every string (keys included) quoted by {@linkcode quote}, odd whitespace. */
function escapedJson(value: unknown, rand: () => number): string {
  const w = () => space(rand);
  if (Array.isArray(value)) {
    return `[${w()}${value.map((v) => escapedJson(v, rand)).join(`${w()},${w()}`)}${w()}]`;
  }
  if (value && typeof value === "object") {
    const members = Object.keys(value).map((k) =>
      `${quote(k, rand)}${w()}:${w()}${escapedJson((value as Record<string, unknown>)[k], rand)}`
    );
    return `{${w()}${members.join(`${w()},${w()}`)}${w()}}`;
  }
  if (typeof value === "string") return quote(value, rand);
  return JSON.stringify(value);
}

Deno.test("parseJson equals the value on random JSON with escaped keys (values, key order, __proto__, prototypes)", () => {
  const rand = prng(12);
  let slow = 0;
  for (let i = 0; i < 3000; i++) {
    const value: Record<string, unknown> = {};
    put(value, `k${i % 7}`, 1);
    put(value, randomKey(rand), randomValue(rand, 0));
    const text = escapedJson(value, rand);
    if (hasEscapedKey(text)) slow++;
    const parsed = parseJson(text);
    assert.deepStrictEqual(parsed, value, text);
    assert.equal(shape(parsed), shape(value), text);
    assertPlain(parsed);
  }
  assert.ok(slow > 1000, `${slow} texts took the escaped-key path`);
});

Deno.test("every mutation JSON.parse rejects, parseJson rejects with a SyntaxError, and it accepts the rest", () => {
  const rand = prng(99);
  const INSERTS = ['"', "\\", ":", ",", "{", "}", "[", "]", " ", "x", "0", "-", ".", "e", "\u0001", "u", "n"];
  let rejected = 0;
  for (let i = 0; i < 400; i++) {
    const base = escapedJson({ "\u00e9": randomValue(rand, 0), z: [randomKey(rand)] }, rand);
    for (let m = 0; m < 10; m++) {
      const at = Math.floor(rand() * (base.length + 1));
      const r = rand();
      const text = r < 0.3
        ? base.slice(0, at) + base.slice(at + 1)
        : r < 0.6
        ? base.slice(0, at) + INSERTS[Math.floor(rand() * INSERTS.length)] + base.slice(at)
        : r < 0.85
        ? base.slice(0, at) + INSERTS[Math.floor(rand() * INSERTS.length)] + base.slice(at + 1)
        : base.slice(0, at);
      let nativeError: unknown;
      try {
        JSON.parse(text);
      } catch (error) {
        nativeError = error;
      }
      if (nativeError) {
        rejected++;
        assert.throws(() => parseJson(text), SyntaxError, text);
      } else assert.doesNotThrow(() => parseJson(text), text);
    }
  }
  assert.ok(rejected > 1000, `${rejected} mutations were invalid`);
});

Deno.test("__proto__, repeated keys, integer-like keys: as JSON.parse of the same text without escapes", () => {
  const pairs: [string, string][] = [
    [R`{"__pro\u0074o__":{"x":1},"a":2}`, `{"__proto__":{"x":1},"a":2}`],
    [R`{"\u0062":1,"a":2,"b":3,"\u0061":4}`, `{"b":1,"a":2,"b":3,"a":4}`],
    [
      R`{"b":1,"\u0031":2,"0":3,"4294967295":4,"4294967294":5,"-1":6,"01":7,"\u0031":8,"1.5":9}`,
      `{"b":1,"1":2,"0":3,"4294967295":4,"4294967294":5,"-1":6,"01":7,"1":8,"1.5":9}`,
    ],
    [R`{"__proto__":1,"\u005f_proto__":2}`, `{"__proto__":1,"__proto__":2}`],
    [R`[{"\u0041":[]},{},[],"",0,-0,1e400,-1e-400]`, `[{"A":[]},{},[],"",0,-0,1e400,-1e-400]`],
  ];
  for (const [escaped, plain] of pairs) {
    const ours = parseJson(escaped);
    const native = JSON.parse(plain);
    assert.deepStrictEqual(ours, native, escaped);
    assert.equal(shape(ours), shape(native), escaped);
    assertPlain(ours);
  }
  const proto = parseJson(R`{"__pro\u0074o__":{"x":1}}`) as Record<string, unknown>;
  assert.ok(Object.hasOwn(proto, "__proto__"));
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(Object.is((parseJson(R`{"\u0041":-0}`) as { A: number }).A, -0), true);
});

Deno.test("10,000 levels of nesting parse without recursion", () => {
  const depth = 10_000;
  const arrays = parseJson("[".repeat(depth) + R`{"\u0041":1}` + "]".repeat(depth));
  let v: unknown = arrays;
  for (let i = 0; i < depth; i++) v = (v as unknown[])[0];
  assert.deepEqual(v, { A: 1 });
  const objects = parseJson(R`{"\u0041":`.repeat(depth) + "null" + "}".repeat(depth));
  v = objects;
  for (let i = 0; i < depth; i++) {
    assert.deepEqual(Object.keys(v as object), ["A"]);
    v = (v as Record<string, unknown>).A;
  }
  assert.equal(v, null);
  assert.throws(() => parseJson(R`{"\u0041":`.repeat(depth) + "null" + "}".repeat(depth - 1)), SyntaxError);
});

// That these stay linear is timed, as a ratio against a plain MiB, by `deno task bench bounds`.
Deno.test("a MiB of backslashes, quotes, escaped quotes and escaped keys: parsed as JSON.parse parses it", () => {
  for (const [label, text, escapedKey] of mibInputs()) {
    assert.equal(hasEscapedKey(text), escapedKey, label);
    let native: unknown;
    try {
      native = JSON.parse(text.replaceAll(R`\u0041`, "A"));
    } catch (error) {
      native = error;
    }
    let ours: unknown;
    try {
      ours = parseJson(text);
    } catch (error) {
      ours = error;
    }
    if (native instanceof SyntaxError) assert.ok(ours instanceof SyntaxError, label);
    else assert.equal(shape(ours), shape(native), label);
  }
});

// ---------------------------------------------------------------------------------------------------
// End to end: a hostile downstream's poison, then a host's call with an escaped key to another server.

const VICTIM_ARGS = R`{"zq":"e","caf\u00e9":"x"}`;
const CALL = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"NAME","arguments":${VICTIM_ARGS}}}`;

/** The `args` tool's answer when the hostile server is spoken to directly (no gateway), parsed safely. */
async function directAnswer(): Promise<unknown> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", HOSTILE, "--mode", "poison"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n' +
      CALL(1).replace("NAME", "args") + "\n",
  ));
  await w.close();
  const out = new TextDecoder().decode((await child.output()).stdout);
  const line = out.split("\n").find((l) => l.includes('"id":1'))!;
  return (parseJson(line) as { result: unknown }).result;
}

Deno.test("a hostile server's poison does not corrupt another server's escaped keys through the gateway", async () => {
  const direct = await directAnswer();
  const server = (name: string) =>
    `  ${name}:\n    command: ${DENO}\n    args: ${
      JSON.stringify(["run", "-A", HOSTILE, "--mode", "poison"])
    }\n`;
  const hub = new Hub({
    config: parseConfig(`servers:\n${server("evil")}${server("mirror")}`, "/tmp/mcphub.yaml", {
      env: { get: () => undefined },
      cwd: "/tmp",
    }),
    env: Deno.env.toObject(),
    version: "test",
    log: () => {},
  });
  const gateway = new Gateway(hub, { version: "test", log: () => {}, start: () => void hub.start() });
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const host = input.writable.getWriter();
  const answers: string[] = [];
  let buffer = "";
  let answered: () => void = () => {};
  const decoder = new TextDecoder();
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        answers.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        answered();
      }
    },
  });
  const ask = async (line: string): Promise<Record<string, unknown>> => {
    const n = answers.length;
    await host.write(new TextEncoder().encode(line + "\n"));
    while (answers.length === n) await new Promise<void>((resolve) => answered = resolve);
    return parseJson(answers[n]!) as Record<string, unknown>;
  };
  try {
    await gateway.connect(new StdioServerTransport(input.readable, output));
    await ask(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    );
    await host.write(new TextEncoder().encode('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'));
    const list = await ask('{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}') as {
      result: { tools: { name: string }[] };
    };
    const names = list.result.tools.map((t) => t.name);
    assert.ok(names.includes("evil__poison") && names.includes("mirror__args"), names.join());
    // The poison crosses the gateway (its key with a backslash arrives intact)...
    const poisoned = await ask(CALL(3).replace("NAME", "evil__poison")) as {
      result: { _meta: { p: Record<string, unknown> } };
    };
    assert.deepEqual(Object.keys(poisoned.result._meta.p), ["zq", "caf\\"]);
    // ...and the isolate is poisoned the way an SDK transport's JSON.parse would poison it.
    JSON.parse(R`{"zq":"e","caf\\":1}`);
    // The host's escaped key reaches the other server intact, and its escaped answer the host.
    const answer = await ask(CALL(4).replace("NAME", "mirror__args")) as { result: Record<string, unknown> };
    assert.deepEqual(answer.result, direct);
    assert.deepEqual(answer.result, {
      content: [{ type: "text", text: JSON.stringify(["zq", "café"]) }],
      structuredContent: { zq: "e", "café": "x" },
    });
    assert.deepEqual(Object.keys(answer.result.structuredContent as object), ["zq", "café"]);
  } finally {
    await gateway.close();
    await hub.close();
    await host.close().catch(() => {});
  }
});

Deno.test("over HTTP too: a host's escaped key reaches the server intact in a poisoned isolate", async () => {
  const { listen } = await import("../../src/http/mod.ts");
  const config = parseConfig(
    `servers:\n  mirror:\n    command: ${DENO}\n    args: ${
      JSON.stringify(["run", "-A", HOSTILE, "--mode", "poison"])
    }\n`,
    "/tmp/mcphub.yaml",
    { env: { get: () => undefined }, cwd: "/tmp" },
  );
  const listener = await listen({
    config,
    env: Deno.env.toObject(),
    tokenEnv: { get: () => undefined },
    version: "test",
    log: () => {},
    address: { hostname: "127.0.0.1", port: 0 },
  });
  const url = `${listener.origin}/mcp`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  /** POSTs `body`; the JSON-RPC answer in it (JSON or one SSE event), parsed safely, if any. */
  const post = async (body: string): Promise<Record<string, unknown> | undefined> => {
    const response = await fetch(url, { method: "POST", headers, body });
    const session = response.headers.get("mcp-session-id");
    if (session) headers["mcp-session-id"] = session;
    const text = await response.text();
    assert.ok(response.ok, `${response.status} ${text}`);
    if (!text) return undefined;
    const data = response.headers.get("content-type")?.includes("text/event-stream")
      ? text.split("\n").find((l) => l.startsWith("data: "))!.slice(6)
      : text;
    return parseJson(data) as Record<string, unknown>;
  };
  try {
    await post(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    );
    headers["mcp-protocol-version"] = "2025-06-18";
    await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    // The isolate poisoned, as an HTTP downstream's answer parsed by the SDK would poison it.
    JSON.parse(R`{"zq":"e","caf\\":1}`);
    const answer = await post(CALL(2).replace("NAME", "mirror__args")) as { result: Record<string, unknown> };
    assert.deepEqual(answer.result, {
      content: [{ type: "text", text: JSON.stringify(["zq", "café"]) }],
      structuredContent: { zq: "e", "café": "x" },
    });
  } finally {
    await listener.stop();
  }
});
