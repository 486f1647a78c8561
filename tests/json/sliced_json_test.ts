import assert from "node:assert/strict";
import { RawBytes } from "../../src/json/raw_json.ts";
import {
  jsonTextSteps,
  leadSteps,
  parseSteps,
  parseTextSteps,
  slicedParse,
  slicedParseApplies,
  slicedStringifyApplies,
  stringifySteps,
} from "../../src/json/sliced_json.ts";
import { drain } from "../../src/catalog/mod.ts";
import { CoalescingWriter } from "../../src/json/pipe.ts";
import { ProtocolViolation } from "../../src/mcp/jsonrpc_line.ts";
import { StdioClientTransport } from "../../src/downstream/stdio.ts";
import { concatBytes, DENO, prng, tempDir } from "../helpers.ts";

const STRING_BITS = [
  "a",
  "Z",
  " ",
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  "é",
  "€",
  "中",
  "😀", // a surrogate pair
  "\ud83d", // a lone high surrogate
  "\ude00", // a lone low surrogate
  "\u2028",
  "\ufeff",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
];

const KEYS = ["a", "b", "__proto__", "1", "0", "10", "constructor", "toString", "ké", 'q"k', "\\", ""];

function randomString(rand: () => number): string {
  let s = "";
  const n = Math.floor(rand() * 12);
  for (let i = 0; i < n; i++) s += STRING_BITS[Math.floor(rand() * STRING_BITS.length)];
  return s;
}

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 6 || r < 0.3) {
    const k = Math.floor(rand() * 8);
    if (k === 0) return null;
    if (k === 1) return rand() < 0.5;
    if (k === 2) return Math.floor(rand() * 2000) - 1000;
    if (k === 3) return (rand() - 0.5) * 1e21;
    if (k === 4) return rand() * 1e-7;
    return randomString(rand);
  }
  const n = Math.floor(rand() * (depth < 2 ? 40 : 6));
  if (r < 0.65) return Array.from({ length: n }, () => randomValue(rand, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    const key = rand() < 0.5 ? KEYS[Math.floor(rand() * KEYS.length)]! : randomString(rand);
    // No key with an escape in its JSON form: V8's JSON.parse (Deno 2.9.6) itself misreads one that
    // follows a key sequence it has seen (`[{"a":1,"\\\\":2},{"a":3,"\\u0041":4}]` gives "\\" for "A"),
    // so the reference would depend on what was parsed before.
    if (JSON.stringify(key).includes("\\")) continue;
    Object.defineProperty(out, key, {
      value: randomValue(rand, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** JSON text of `value` with random whitespace between tokens and, now and then, a repeated key. */
function randomText(value: unknown, rand: () => number): string {
  const ws = () => ["", "", " ", "\n", "\t", "\r", "  "][Math.floor(rand() * 7)]!;
  if (Array.isArray(value)) {
    return `[${ws()}${value.map((v) => randomText(v, rand) + ws()).join(`,${ws()}`)}]`;
  }
  if (value && typeof value === "object") {
    const members = Object.keys(value).map((k) =>
      `${JSON.stringify(k)}${ws()}:${ws()}${randomText((value as Record<string, unknown>)[k], rand)}${ws()}`
    );
    // A repeated key: JSON.parse keeps its first place and its last value.
    if (members.length && rand() < 0.2) members.push(`${JSON.stringify(Object.keys(value)[0])}:${rand()}`);
    return `{${ws()}${members.join(`,${ws()}`)}}`;
  }
  // Escapes spelled out now and then (\u00e9 instead of é, \/ instead of /).
  const text = JSON.stringify(value);
  if (typeof value === "string" && rand() < 0.3) {
    return text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .replace(/\//g, "\\/");
  }
  return text;
}

/** `bytes` as a RawBytes cut into random parts (through UTF-8 sequences and escapes alike). */
function cut(bytes: Uint8Array, rand: () => number): RawBytes {
  const raw = new RawBytes();
  for (let at = 0; at < bytes.length;) {
    const n = 1 + Math.floor(rand() * 40);
    raw.append(bytes.subarray(at, at + n));
    at += n;
  }
  return raw;
}

/** What JSON.parse makes of the line (as the transport decodes it), or the SyntaxError class. */
function reference(bytes: Uint8Array): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

function sliced(raw: RawBytes): { value: unknown } | { error: string } {
  try {
    return { value: drain(parseSteps(raw)) };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

/** Equal values, and the same key order at every level (deepStrictEqual does not compare order). */
function assertSame(actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(actual, expected, what);
  const order = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(order)
      : v && typeof v === "object"
      ? Object.keys(v).map((k) => [k, order((v as Record<string, unknown>)[k])])
      : v;
  assert.deepStrictEqual(order(actual), order(expected), `${what}: key order`);
}

/** True when a key somewhere in `value` has an escape in its JSON form. */
function hasEscapedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasEscapedKey);
  if (!value || typeof value !== "object") return false;
  return Object.entries(value).some(([k, v]) => JSON.stringify(k).includes("\\") || hasEscapedKey(v));
}

/** Runs `fn` with every container split into the smallest pieces. */
function withTinyPieces(fn: () => void): void {
  const saved = { ...slicedParse };
  slicedParse.runBytes = 8;
  slicedParse.scanBytes = 5;
  try {
    fn();
  } finally {
    slicedParse.runBytes = saved.runBytes;
    slicedParse.scanBytes = saved.scanBytes;
  }
}

Deno.test("parseSteps equals JSON.parse on random JSON (escapes, surrogates, repeated and __proto__ keys)", () => {
  withTinyPieces(() => {
    for (let seed = 1; seed <= 250; seed++) {
      const rand = prng(seed);
      const value = {
        jsonrpc: "2.0",
        id: seed,
        result: { tools: randomValue(rand, 0), more: randomValue(rand, 1) },
      };
      const text = (rand() < 0.5 ? " \n" : "") +
        randomText(rand() < 0.2 ? randomValue(rand, 0) : value, rand) +
        (rand() < 0.5 ? " \r" : "");
      const bytes = new TextEncoder().encode(text);
      const expected = reference(bytes);
      assert.ok("value" in expected, `seed ${seed}: the generated text is JSON`);
      if (!"[{".includes(text.trim()[0]!)) continue;
      const actual = sliced(cut(bytes, rand));
      assert.ok("value" in actual, `seed ${seed}: parsed (${JSON.stringify(actual)})`);
      assertSame(actual.value, expected.value, `seed ${seed}`);
    }
  });
});

Deno.test("parseSteps makes __proto__ an own key, as JSON.parse does, in split and whole pieces", () => {
  withTinyPieces(() => {
    const text = '{"__proto__":{"x":1},"a":[{"__proto__":[1,2,3,4,5,6,7,8,9]},{"__proto__":null}]}';
    const value = drain(parseSteps(new RawBytes([new TextEncoder().encode(text)]))) as Record<
      string,
      unknown
    >;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepStrictEqual(Object.keys(value), ["__proto__", "a"]);
    assertSame(value, JSON.parse(text), "proto");
  });
});

/** Single-byte mutations of valid JSON: valid exactly when JSON.parse says so, with the same value. */
Deno.test("parseSteps rejects exactly the invalid JSON that JSON.parse rejects (random mutations)", () => {
  const mutations = [
    ",",
    ":",
    '"',
    "\\",
    "{",
    "}",
    "[",
    "]",
    " ",
    "x",
    "0",
    "-",
    ".",
    "e",
    "\u0001",
    "\t",
    "\ufeff",
    "\xff",
  ];
  withTinyPieces(() => {
    let invalid = 0;
    for (let seed = 1; seed <= 1500; seed++) {
      const rand = prng(seed * 7919);
      const text = randomText({ result: { tools: randomValue(rand, 1) }, id: 1 }, rand);
      const bytes = [...new TextEncoder().encode(text)];
      const at = Math.floor(rand() * bytes.length);
      const kind = Math.floor(rand() * 3);
      const m = mutations[Math.floor(rand() * mutations.length)]!;
      const insert = m === "\xff" ? [0xff] : [...new TextEncoder().encode(m)];
      if (kind === 0) bytes.splice(at, 1);
      else if (kind === 1) bytes.splice(at, 0, ...insert);
      else bytes.splice(at, 1, ...insert);
      const mutated = new Uint8Array(bytes);
      const expected = reference(mutated);
      const first = new TextDecoder().decode(mutated).trim()[0];
      if (first !== "{" && first !== "[") continue;
      const actual = sliced(cut(mutated, rand));
      if ("error" in expected) {
        invalid++;
        assert.deepStrictEqual(
          actual,
          { error: "SyntaxError" },
          `seed ${seed}: ${new TextDecoder().decode(mutated)}`,
        );
      } else {
        assert.ok("value" in actual, `seed ${seed}: ${new TextDecoder().decode(mutated)}`);
        // A mutation can make an escaped key, which V8's JSON.parse may misread (see randomValue).
        if (!hasEscapedKey(expected.value) && !hasEscapedKey(actual.value)) {
          assertSame(actual.value, expected.value, `seed ${seed}`);
        }
      }
    }
    assert.ok(invalid > 500, `${invalid} of the mutations were invalid`);
  });
});

Deno.test("parseSteps: the usual invalid shapes are SyntaxErrors", () => {
  const bad = [
    '{"a":1,}',
    "[1,]",
    '{"a":1}x',
    '{"a":1} {"b":2}',
    '{"a" 1}',
    '{"a":}',
    "{a:1}",
    "[1 2]",
    "[{}{}]",
    '["\\x"]',
    '["\t"]',
    '{"a":[1,2}',
    '{"a":"unterminated}',
    "[\ufeff1]",
    '{"a":01}',
    '{"tools":[' + '{"n":1},'.repeat(50) + "]}",
  ];
  withTinyPieces(() => {
    for (const text of bad) {
      assert.throws(() => JSON.parse(text), SyntaxError, text);
      assert.throws(
        () => drain(parseSteps(new RawBytes([new TextEncoder().encode(text)]))),
        SyntaxError,
        text,
      );
    }
  });
  // A byte-order mark at the very start is dropped by decoding: valid, as the transport has it.
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":[1,2,3]}')]);
  assert.deepStrictEqual(drain(parseSteps(new RawBytes([bom]))), { a: [1, 2, 3] });
});

Deno.test("parseSteps on deep nesting: equal to JSON.parse, split to a bound and parsed whole below it", () => {
  withTinyPieces(() => {
    for (const depth of [1, 15, 16, 17, 100, 5_000]) {
      const text = "[".repeat(depth) + '1,"x"' + "]".repeat(depth);
      const bytes = new TextEncoder().encode(text);
      // Compared as text: deepStrictEqual recurses too deep for 5,000 levels.
      assert.equal(
        JSON.stringify(drain(parseSteps(cut(bytes, prng(depth))))),
        JSON.stringify(JSON.parse(text)),
      );
      const broken = new TextEncoder().encode("[".repeat(depth) + "1" + "]".repeat(depth - 1) + "}");
      assert.throws(() => drain(parseSteps(cut(broken, prng(depth)))), SyntaxError);
    }
  });
});

Deno.test("slicedParseApplies and leadSteps: huge lines, and where their first token is", () => {
  const line = (text: string, bom = false) =>
    new RawBytes([new Uint8Array([...(bom ? [0xef, 0xbb, 0xbf] : []), ...new TextEncoder().encode(text)])]);
  const pad = " ".repeat(1024 * 1024);
  assert.equal(slicedParseApplies(line("{" + pad + "}")), true);
  assert.equal(slicedParseApplies(line('{"a":1}')), false);
  assert.equal(drain(leadSteps(line(" \n[" + pad + "]"))), 2);
  assert.equal(drain(leadSteps(line("[]", true))), 3);
  // Megabytes of whitespace before the value: found in steps, and the value parsed.
  const late = line(pad + pad + '{"a":[1]}' + pad);
  const steps = leadSteps(late);
  let r = steps.next(), yields = 0;
  while (!r.done) yields++, r = steps.next();
  assert.equal(r.value, 2 * pad.length);
  assert.ok(yields >= 2, `${yields} yields`);
  assert.deepStrictEqual(drain(parseSteps(late, r.value)), { a: [1] });
  assert.equal(drain(leadSteps(line(pad))), -1, "whitespace only");
});

Deno.test("parseSteps of a 100,000-tool tools/list answer equals JSON.parse and yields throughout", () => {
  const tools = Array.from({ length: 100_000 }, (_, i) => ({
    name: `t${i}`,
    description: `Tool ${i} — «${"é".repeat(i % 7)}» 😀`,
    inputSchema: { type: "object", properties: { n: { type: "number" } } },
  }));
  const text = JSON.stringify({ jsonrpc: "2.0", id: 3, result: { tools, nextCursor: "c" } });
  const bytes = new TextEncoder().encode(text);
  // As the pipe delivers it: 64 KiB chunks.
  const raw = new RawBytes();
  for (let at = 0; at < bytes.length; at += 65536) raw.append(bytes.subarray(at, at + 65536));
  assert.equal(slicedParseApplies(raw), true);
  const steps = parseSteps(raw);
  let yields = 0;
  let r = steps.next();
  while (!r.done) yields++, r = steps.next();
  assert.ok(yields > 200, `${yields} yields`);
  assertSame(r.value, JSON.parse(text), "tools/list");
});

// --- serializing ---------------------------------------------------------------------------------

function stringified(value: unknown, suffix = "\n"): string {
  return new TextDecoder().decode(concatBytes(drain(stringifySteps(value, suffix))));
}

Deno.test("stringifySteps gives the bytes of JSON.stringify: big arrays, toJSON, holes, undefined, lone surrogates", () => {
  const when = new Date(0);
  for (let seed = 1; seed <= 60; seed++) {
    const rand = prng(seed);
    const tools: unknown[] = Array.from(
      { length: 1000 + Math.floor(rand() * 1500) },
      () => randomValue(rand, 3),
    );
    tools[5] = undefined;
    tools[6] = () => 1;
    tools[7] = when;
    tools[8] = { toJSON: (key: string) => `key ${key}` };
    tools[9] = "\ud800 lone";
    delete tools[10];
    const message = {
      result: {
        tools,
        skipped: undefined,
        fn: () => 0,
        at: when,
        nested: [[...tools.slice(0, 1200)], { x: 1 }],
      },
      jsonrpc: "2.0",
      id: seed,
      extra: Object.assign(Object.create(null), { z: 1, a: [1, undefined] }),
    };
    assert.equal(slicedStringifyApplies(message), true);
    const expected = JSON.stringify(message) + "\n";
    assert.equal(stringified(message), expected, `seed ${seed}`);
    assert.deepStrictEqual(
      concatBytes(drain(stringifySteps(message, "\n"))),
      new TextEncoder().encode(expected),
      `seed ${seed}: bytes`,
    );
  }
  assert.equal(slicedStringifyApplies({ jsonrpc: "2.0", id: 1, result: { tools: [1, 2, 3] } }), false);
  const list = Array.from({ length: 3000 }, (_, i) => ({ name: `t${i}`, d: i % 2 ? undefined : "\ud800é" }));
  assert.equal(drain(jsonTextSteps(list)), JSON.stringify(list));
  assert.throws(() => drain(stringifySteps({ a: Array(2000).fill(1n) })), TypeError);
});

Deno.test("CoalescingWriter: a huge message is written as JSON.stringify's bytes, in order with the others", async () => {
  const chunks: Uint8Array[] = [];
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      chunks.push(chunk.slice());
    },
  });
  const writer = new CoalescingWriter(writable.getWriter());
  const huge = {
    jsonrpc: "2.0",
    id: 2,
    result: { tools: Array.from({ length: 20_000 }, (_, i) => ({ name: `t${i}`, description: "é😀" })) },
  };
  const before = { jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } };
  const after = { jsonrpc: "2.0", id: 3, result: {} };
  const writes = [
    writer.write(before),
    writer.write(huge),
    writer.write(after),
    writer.writeBytes([new TextEncoder().encode('{"raw":true}\n')]),
  ];
  await Promise.all(writes);
  await writer.drained();
  const text = new TextDecoder().decode(concatBytes(chunks));
  assert.equal(
    text,
    [before, huge, after].map((m) => JSON.stringify(m) + "\n").join("") + '{"raw":true}\n',
  );
  await writer.close();
});

Deno.test("StdioClientTransport: huge lines parsed in slices, in order, with the same violations as small ones", async () => {
  await using tmp = await tempDir();
  // 1.4 MB: over the 1 MiB from which lines are parsed in slices.
  const big = Array.from({ length: 100_000 }, (_, i) => `item ${i}`);
  const valid = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: big } };
  const text = JSON.stringify(valid);
  const lines = [
    " ".repeat(2 * 1024 * 1024), // blank: skipped
    "\t".repeat(1024 * 1024) + text, // valid, after a megabyte of whitespace
    text.replace(',"item 30000"', ',,"item 30000"'), // a comma too many: not JSON
    JSON.stringify(big), // JSON, not JSON-RPC
    '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"last"}}',
  ];
  await Deno.writeTextFile(`${tmp.path}/lines.txt`, lines.join("\n") + "\n");
  const script = `${tmp.path}/cat.ts`;
  await Deno.writeTextFile(
    script,
    `const f = await Deno.open(${JSON.stringify(`${tmp.path}/lines.txt`)});\n` +
      "await f.readable.pipeTo(Deno.stdout.writable, { preventClose: true });\n" +
      "await new Promise(() => {});\n",
  );
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", script],
    env: Deno.env.toObject(),
  });
  const seen: unknown[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => done = resolve);
  transport.onmessage = (message) => {
    seen.push(message);
    if ((message as { params?: { data?: unknown } }).params?.data === "last") done();
  };
  transport.onerror = (error) => seen.push(error);
  await transport.start();
  try {
    await finished;
  } finally {
    await transport.close();
  }
  assert.equal(seen.length, 4);
  assert.ok(JSON.stringify(seen[0]) === text, "the valid line, parsed");
  assert.ok(seen[1] instanceof ProtocolViolation);
  assert.equal(seen[1].message, "Not JSON");
  assert.ok(seen[1].line === lines[2]!.slice(0, 64 * 1024), "the violation keeps the line's first 64 KiB");
  assert.ok(seen[1].cause instanceof SyntaxError);
  assert.ok(seen[2] instanceof ProtocolViolation);
  assert.equal(seen[2].message, "Not a JSON-RPC 2.0 message");
  assert.equal((seen[3] as { params: { data: string } }).params.data, "last");
});

Deno.test("parseTextSteps equals JSON.parse of a long text, its pieces never splitting a surrogate pair", () => {
  // Each shift puts a piece boundary on another offset, inside a pair among them.
  for (const shift of [0, 1, 2, 3]) {
    const tools = Array.from(
      { length: 20_000 },
      (_, i) => ({ name: `t${i}`, description: "😀é".repeat(i % 5) }),
    );
    const text = " ".repeat(shift) + JSON.stringify(tools);
    const steps = parseTextSteps(text);
    let yields = 0;
    let r = steps.next();
    while (!r.done) yields++, r = steps.next();
    assert.deepEqual(r.value, JSON.parse(text), `shift ${shift}`);
    assert.ok(yields >= Math.floor(text.length / (256 * 1024)), `${yields} yields`);
  }
  // A short text at once, and invalid JSON is a SyntaxError either way.
  assert.deepEqual(drain(parseTextSteps('{"a":[1]}')), { a: [1] });
  assert.throws(() => drain(parseTextSteps("[" + "1,".repeat(300_000))), SyntaxError);
  assert.throws(() => drain(parseTextSteps("[1,")), SyntaxError);
});
