import assert from "node:assert/strict";
import { RawBytes, utf8 } from "../../src/json/raw_json.ts";
import {
  definitionShape,
  definitionShapeSteps,
  judgeDefinitionSteps,
  putStandIns,
  replaceSpans,
  SCAN_MIN_BYTES,
  standInSteps,
  UNREAD_MEMBER_BYTES,
  unreadMembers,
  withoutStandIns,
} from "../../src/trust/definition_scan.ts";
import { definitionProblem, UnparsedDefinition } from "../../src/trust/limits.ts";
import { drain } from "../../src/catalog/mod.ts";
import { scan } from "../../src/json/raw_json.ts";
import { StdioClientTransport } from "../../src/downstream/stdio.ts";
import { DENO, tempDir } from "../helpers.ts";

/** The bytes of `text` as one part, or split into parts of `size` bytes (every seam is crossed). */
function raw(text: string, size?: number): RawBytes {
  const bytes = utf8(text);
  if (!size) return new RawBytes([bytes]);
  const out = new RawBytes();
  for (let at = 0; at < bytes.length; at += size) out.append(bytes.subarray(at, at + size));
  return out;
}

/** The size definitionProblem counts, without its limits (the same walk). */
function walkSize(def: unknown): number {
  const stack = [def];
  let bytes = 0;
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") bytes += v.length + 2;
    else if (v === null || typeof v !== "object") bytes += 8;
    else {
      bytes += 2;
      if (Array.isArray(v)) { for (const x of v) bytes += 1, stack.push(x); }
      else for (const k in v) bytes += k.length + 4, stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return bytes;
}

const UNLIMITED = { depth: 1000, size: Infinity };

function judge(text: string, size?: number): UnparsedDefinition | undefined {
  const r = raw(text, size);
  return drain(judgeDefinitionSteps(r, 0, r.length));
}

Deno.test("definitionShape() finds the exact depth and the size definitionProblem counts, across every seam", async (t) => {
  const cases: [string, number][] = [
    ['"str"', 0],
    ["12.5e3", 0],
    ["[]", 1],
    ["{}", 1],
    ['{"name":"a","x":[1,2,{"b":null}]}', 3],
    ['[[[[{"a":[true,false]}]]]]', 6],
    // Strings holding quotes, backslashes and brackets: none of them count.
    ['{"a":"q\\"}]{[","b\\\\":"\\\\","name" : "x\\u0041é😀"}', 1],
    ['{"k":["\\\\\\"[[[[",{"\\"":{}}]}', 4],
    [' \n{ "a" : [ 1 , { "b" : "c" } ] }\t ', 3],
  ];
  for (const [text, depth] of cases) {
    await t.step(text, () => {
      for (const size of [undefined, 1, 2, 3, 7]) {
        const shape = definitionShape(raw(text, size), 0, undefined, UNLIMITED);
        assert.equal(shape.complete, true);
        assert.equal(shape.depth, depth);
        assert.equal(shape.size, walkSize(JSON.parse(text)));
        assert.equal(shape.over, undefined);
      }
    });
  }
});

Deno.test("definitionShape() counts UTF-16 units as the walk does: escapes, 2-, 3- and 4-byte sequences, controls", () => {
  const def = {
    name: "x",
    description: 'é😀\u0001"\\\u2028日本'.repeat(500),
    inputSchema: { type: "object", a: [1, true, null, "s", [], {}, -1.5e3], "k\u00e9😀": "\ud83d" },
  };
  for (const text of [JSON.stringify(def), JSON.stringify(def, null, 2), asciiJson(def)]) {
    assert.equal(definitionShape(raw(text, 5), 0, undefined, UNLIMITED).size, walkSize(def));
  }
});

/** JSON with every non-ASCII unit escaped (`\u00e9`). */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

Deno.test("definitionShape() names the limit the bytes pass first, and agrees with definitionProblem within 64 levels", () => {
  const limits = { depth: 3, size: 40 };
  assert.equal(definitionShape(raw('{"a":{"b":{"c":{}}}}'), 0, undefined, limits).over, "depth");
  assert.equal(definitionShape(raw('{"a":{"b":{"c":1}}}'), 0, undefined, limits).over, undefined);
  assert.equal(definitionShape(raw(`{"a":"${"x".repeat(40)}"}`), 0, undefined, limits).over, "size");
  assert.equal(
    definitionShape(raw(`{"a":"${"x".repeat(30)}","b":{"c":{"d":{}}}}`), 0, undefined, limits).over,
    "size",
  );
  // The walk's own limits: exactly at 512 KiB and 64 levels is within, one more is not.
  for (const extra of [0, 1]) {
    const def = { name: "x", description: "", inputSchema: {} };
    def.description = "d".repeat(512 * 1024 - walkSize(def) + extra);
    const shape = definitionShape(raw(JSON.stringify(def)));
    assert.equal(shape.over, extra ? "size" : undefined);
    assert.equal(definitionProblem(def) !== undefined, extra === 1);
  }
  for (const levels of [63, 64]) {
    const text = '{"name":"x","s":' + "[".repeat(levels) + "]".repeat(levels) + "}";
    assert.equal(definitionShape(raw(text)).over, levels === 64 ? "depth" : undefined);
    assert.equal(definitionProblem(JSON.parse(text)) !== undefined, levels === 64);
  }
});

Deno.test("definitionShape() says a truncated, unbalanced or trailing value is not complete", () => {
  for (
    const text of [
      '{"a":',
      '{"a":"b',
      '{"a":"b\\"}',
      "{]",
      "[}",
      "}",
      "{}}",
      "{} x",
      '{} "a"',
      "1 2",
      "",
      "   ",
      "[[[[[",
      ",",
    ]
  ) {
    assert.equal(definitionShape(raw(text), 0, undefined, UNLIMITED).complete, false, text);
    assert.equal(judge(text), undefined, text);
  }
  // Garbage bytes inside strings or as values do not break the pass.
  const shape = definitionShape(raw('{"a":"\xff\xfe","b":[tru, nul]}'), 0, undefined, UNLIMITED);
  assert.equal(shape.complete, true);
});

Deno.test("definitionShape() reads 1,000,000 levels without recursion, in steps of bounded size", () => {
  const depth = 1_000_000;
  const text = '{"name":"d","inputSchema":' + '{"type":"array","items":'.repeat(depth) + "1" +
    "}".repeat(depth) +
    "}";
  const r = raw(text);
  const steps = definitionShapeSteps(r, 0, r.length);
  let yields = 0;
  let next = steps.next();
  while (!next.done) yields++, next = steps.next();
  const shape = next.value;
  assert.equal(shape.depth, depth + 1);
  assert.equal(shape.over, "depth");
  assert.equal(shape.complete, true);
  // A yield every 256 KiB: the 24 MB are read in ~94 steps.
  assert.equal(yields, Math.ceil(r.length / (256 * 1024)));
  assert.deepEqual(
    judge(text),
    new UnparsedDefinition("d", "it nests deeper than 64 levels (the limit of a tool definition)"),
  );
});

Deno.test("judgeDefinitionSteps() gives definitionProblem's reason and name, and nothing within the limits", async (t) => {
  const big = "D".repeat(600_000);
  const deep = "[".repeat(100) + "]".repeat(100);
  const cases: [string, string | undefined][] = [
    [JSON.stringify({ name: "ok", description: "small" }), undefined],
    [JSON.stringify({ name: "shout", description: big }), "shout"],
    [`{"description":"${big}","name":"late"}`, "late"],
    // The last `name` wins, as in JSON.parse.
    [`{"name":"first","x":${deep},"name":"second"}`, "second"],
    [`{"n\\u0061me":"escaped","x":${deep}}`, "escaped"],
    [`{"name":{"a":1},"x":${deep}}`, undefined],
    [`{"name":"","x":${deep}}`, undefined],
    [`{"name":7,"x":${deep}}`, undefined],
    [`{"x":${deep}}`, undefined],
    [`[${deep}]`, undefined],
    [`"${big}"`, undefined],
    [`{"name":"${"N".repeat(300)}","x":${deep}}`, "N".repeat(129)],
    [`{"name":"${"é".repeat(5000)}","x":${deep}}`, "é".repeat(129)],
    [`{"name":"${"\\u00e9".repeat(5000)}","x":${deep}}`, "é".repeat(129)],
  ];
  for (const [text, shown] of cases) {
    await t.step(text.slice(0, 60), () => {
      for (const size of [undefined, 4096, 7]) {
        const judged = judge(text, size);
        const expected = definitionProblem(JSON.parse(text));
        if (text.includes('"small"')) {
          assert.equal(judged, undefined);
          continue;
        }
        assert.ok(judged, "judged");
        assert.equal(judged.problem, expected);
        assert.equal(judged.name, shown);
      }
    });
  }
});

Deno.test("standInSteps() replaces only the big over-limit tools; the line then parses with them in place", () => {
  const ok = { name: "ok", inputSchema: { type: "object" } };
  const fat = { name: "fat", description: "x".repeat(SCAN_MIN_BYTES), inputSchema: { type: "object" } };
  const deep = '{"name":"deep","inputSchema":' + '{"a":'.repeat(2000) + "1" + "}".repeat(2000) + "}";
  // Deeper than 64 levels but under SCAN_MIN_BYTES: left to the walk after the parse.
  const small = '{"name":"small","s":' + "[".repeat(100) + "]".repeat(100) + "}";
  const line = `{"jsonrpc":"2.0","id":1,"result":{"tools":[${JSON.stringify(ok)},${deep},${
    JSON.stringify(fat)
  },${small}],"nextCursor":"c"}}`;
  const r = raw(line, 1000);
  const top = scan(r, 0, r.length, ["result", "tools"])!;
  const result = top.members.find((m) => m.key === "result")!.children!;
  const tools = result.members.find((m) => m.key === "tools")!;
  for (const member of [tools, { ...tools, children: undefined }]) {
    const standIns = drain(standInSteps(r, member));
    assert.deepEqual(standIns.map((s) => [s.index, s.definition]), [
      [1, new UnparsedDefinition("deep", "it nests deeper than 64 levels (the limit of a tool definition)")],
    ]);
    const message = JSON.parse(withoutStandIns(r, standIns).text());
    putStandIns(message, standIns);
    assert.deepEqual(message.result.tools[0], ok);
    assert.ok(message.result.tools[1] instanceof UnparsedDefinition);
    assert.deepEqual(message.result.tools[2], fat);
    assert.equal(message.result.tools[3].name, "small");
    assert.equal(message.result.nextCursor, "c");
  }
});

Deno.test("StdioClientTransport judges tools from bytes only in the answer to a tools/list it sent", async () => {
  await using tmp = await tempDir();
  const script = `${tmp.path}/echo_tools.ts`;
  // Answers every request, whatever its method, with a tools list: `ok` and a 2,000-deep `deep`.
  await Deno.writeTextFile(
    script,
    `const deep = '{"name":"deep","inputSchema":' + '{"a":'.repeat(2000) + '1' + '}'.repeat(2000) + '}';
const enc = new TextEncoder();
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  for (let i = buffer.indexOf("\\n"); i !== -1; i = buffer.indexOf("\\n")) {
    const { id } = JSON.parse(buffer.slice(0, i));
    buffer = buffer.slice(i + 1);
    const line = '{"jsonrpc":"2.0","id":' + JSON.stringify(id) + ',"result":{"tools":[{"name":"ok"},' + deep + ']}}\\n';
    await Deno.stdout.write(enc.encode(line));
  }
}
`,
  );
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "-A", script],
    env: Deno.env.toObject(),
  });
  const seen = new Map<unknown, unknown[]>();
  let waiting = 0;
  let done: () => void = () => {};
  transport.onmessage = (message) => {
    const m = message as unknown as { id: unknown; result: { tools: unknown[] } };
    seen.set(m.id, m.result.tools);
    if (seen.size === waiting) done();
  };
  transport.onerror = (error) => seen.set("error", [error]);
  await transport.start();
  try {
    const all = new Promise<void>((resolve) => done = resolve);
    const sends: [string | number, string][] = [[1, "tools/list"], [2, "prompts/list"], ["x", "tools/list"]];
    waiting = sends.length;
    for (const [id, method] of sends) await transport.send({ jsonrpc: "2.0", id, method });
    await all;
  } finally {
    await transport.close();
  }
  const deep = "it nests deeper than 64 levels (the limit of a tool definition)";
  assert.deepEqual(seen.get(1), [{ name: "ok" }, new UnparsedDefinition("deep", deep)]);
  assert.deepEqual(seen.get("x"), [{ name: "ok" }, new UnparsedDefinition("deep", deep)]);
  // Another request's answer is parsed as it is, tools or not.
  const other = seen.get(2)!;
  assert.equal(other.length, 2);
  assert.ok(!(other[1] instanceof UnparsedDefinition));
  assert.equal((other[1] as { name: string }).name, "deep");
  assert.equal(seen.has("error"), false);
});

Deno.test("unreadMembers() leaves big members the gateway does not read unparsed, as empty values of their kind", () => {
  const big = "x".repeat(UNREAD_MEMBER_BYTES);
  const deep = "[".repeat(UNREAD_MEMBER_BYTES) + "]".repeat(UNREAD_MEMBER_BYTES);
  const line =
    `{"jsonrpc":"2.0","id":7,"a":"${big}","b":${deep},"small":"s","result":{"_meta":{"k":"${big}"},` +
    `"tools":[{"name":"${big}"}],"nextCursor":"${big}","n":${"9".repeat(UNREAD_MEMBER_BYTES)},"t":true}}`;
  const r = raw(line, 4096);
  const top = scan(r, 0, r.length, ["result", "tools"])!;
  const result = top.members.find((m) => m.key === "result")!.children!;
  const unread = unreadMembers(r, top.members, result.members);
  assert.deepEqual(unread.map((u) => u.span.key), ["a", "b", "_meta", "n"]);
  assert.deepEqual(JSON.parse(replaceSpans(r, unread).text()), {
    jsonrpc: "2.0",
    id: 7,
    a: "",
    b: [],
    small: "s",
    result: { _meta: {}, tools: [{ name: big }], nextCursor: big, n: null, t: true },
  });
});
