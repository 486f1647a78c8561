import assert from "node:assert/strict";
import { member, RawBytes, scan } from "../../src/json/raw_json.ts";
import { LineSplitter } from "../../src/json/lines.ts";

const encoder = new TextEncoder();

function split(text: string, size: number): RawBytes {
  const bytes = encoder.encode(text);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
  return new RawBytes(parts);
}

const VALID = [
  `{"jsonrpc":"2.0","id":"mcphub-1","result":{"content":[{"type":"text","text":"a\\"b\\\\"}],"isError":false}}`,
  ` { "id" : 5 , "result" : { "x" : [1,2,{"y":"}"}] } , "z":null } `,
  `{"a":"\\\\\\\\","b":[],"c":{},"d":"\\u00e9 é 😀"}`,
  `[1, "two", {"three":3}, [4]]`,
  `{"k\\"ey":1,"é":2,"\\u0041":3,"tab\\t":4,"${"long".repeat(10)}":5,"":6}`,
];

Deno.test("scan() finds every member's value bytes, at any split of the input", () => {
  for (const text of VALID) {
    const value = JSON.parse(text);
    for (const size of [1, 2, 3, 5, 7, 1000]) {
      const raw = split(text, size);
      const found = scan(raw);
      assert.ok(found, `${text} split every ${size}`);
      found.members.forEach((m, i) => {
        assert.deepEqual(raw.json(m.start, m.end), found.kind === "object" ? value[m.key!] : value[i]);
      });
      if (found.kind === "object") assert.deepEqual(found.members.map((m) => m.key), Object.keys(value));
    }
  }
});

Deno.test("scan() refuses what is not a container", () => {
  for (const text of [`{"a" 1}`, `{"a":1`, `"x"`, `{1:2}`, `[1,]`, `{"a":}`, `{"a":1 "b":2}`]) {
    assert.equal(scan(split(text, 2)), undefined, text);
  }
});

Deno.test("scan() descends along its path only", () => {
  const text =
    `{"id":"a","result":{"content":[{"type":"text","text":"x\\"}"},{"type":"image","data":"zz"}],` +
    `"isError":true,"z":{"deep":[1,{"a":2}]}},"after":[{"k":1}]}`;
  const value = JSON.parse(text);
  for (const size of [1, 3, 1000]) {
    const raw = split(text, size);
    const top = scan(raw, 0, raw.length, ["result", "content", "*"])!;
    const result = member(top.members, "result")!;
    const blocks = member(result.children!.members, "content")!.children!.members;
    assert.equal(blocks.length, 2);
    blocks.forEach((block, i) => {
      for (const m of block.children!.members) {
        assert.deepEqual(raw.json(m.start, m.end), value.result.content[i][m.key!]);
      }
    });
    assert.equal(member(result.children!.members, "z")!.children, undefined);
    assert.equal(member(top.members, "after")!.children, undefined);
  }
});

Deno.test("LineSplitter scans each line as its chunks arrive, with the same outcome as scan()", () => {
  const text = VALID[0]! + "\n" + VALID[1]! + "\nnot json\n";
  for (const size of [1, 4, 9, 1000]) {
    const splitter = new LineSplitter();
    splitter.scanPath = ["result"];
    const lines: RawBytes[] = [];
    const bytes = encoder.encode(text);
    for (let i = 0; i < bytes.length; i += size) {
      for (const line of splitter.pushRaw(bytes.slice(i, i + size))) lines.push(line as RawBytes);
    }
    assert.equal(lines.length, 3);
    for (const line of lines) {
      assert.deepEqual(line.scanned ?? undefined, scan(line, 0, line.length, ["result"]));
    }
  }
});
