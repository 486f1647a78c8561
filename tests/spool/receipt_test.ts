import assert from "node:assert/strict";
import { buildReceipt, MIN_BUDGET_BYTES, type ReceiptInput, type ResultLike } from "../../src/spool/mod.ts";
import { mixedText, seeded } from "./_helpers.ts";

const encoder = new TextEncoder();
const bytesOf = (value: unknown) => encoder.encode(JSON.stringify(value)).length;

/** The text content a preview is a prefix of: the text blocks' text joined with "\n". */
function textContent(result: ResultLike): string | undefined {
  const texts = (result.content ?? [])
    .filter((block): block is { type: "text"; text: string } =>
      typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text" &&
      typeof (block as { text?: unknown }).text === "string"
    )
    .map((block) => block.text);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

function nextCodePointEnd(text: string, index: number): number {
  const unit = text.charCodeAt(index);
  const next = text.charCodeAt(index + 1);
  return unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? index + 2 : index + 1;
}

const random = seeded(2024);
const giantJson = JSON.stringify({
  matches: Array.from(
    { length: 12_000 },
    (_, i) => ({ file: `internal/hub/file_${i}.go`, line: i, text: "x" }),
  ),
});
const SHAPES: Record<string, ResultLike> = {
  "one giant text block": { content: [{ type: "text", text: giantJson }] },
  "many small text blocks": {
    content: Array.from({ length: 5000 }, (_, i) => ({ type: "text", text: `line ${i}: ok` })),
  },
  "image blocks": {
    content: Array.from({ length: 3 }, () => ({
      type: "image",
      mimeType: "image/png",
      data: btoa("\x89PNG".repeat(50_000)),
    })),
  },
  "embedded resources and a text block": {
    content: [
      {
        type: "resource",
        resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "r".repeat(200_000) },
      },
      { type: "text", text: "summary: one resource" },
    ],
  },
  "structuredContent-heavy": {
    content: [{ type: "text", text: "see structuredContent" }],
    structuredContent: { rows: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}` })) },
  },
  "isError true": { content: [{ type: "text", text: "boom: ".repeat(100_000) }], isError: true },
  "isError false": { content: [{ type: "text", text: "fine ".repeat(100_000) }], isError: false },
  "empty content": { content: [] },
  "no content": { structuredContent: { big: "z".repeat(300_000) } },
  "unicode-heavy": { content: [{ type: "text", text: mixedText(400_000, random) }] },
  "emoji only": { content: [{ type: "text", text: "😀".repeat(300_000) }] },
  "escape-heavy": { content: [{ type: "text", text: '\u0001"\\\n'.repeat(200_000) }] },
  "lone surrogates": { content: [{ type: "text", text: "a\ud800b\udc00".repeat(100_000) }] },
  "non-text junk blocks": { content: [null, 3, { type: "text" }, { type: "text", text: 5 }, "text"] },
};

const NAMES = {
  typical: { server: "vecgrep", tool: "search", namespaced: "vecgrep__search" },
  "worst ascii": {
    server: "s".repeat(48),
    tool: "t".repeat(300),
    namespaced: `${"s".repeat(48)}__${"t".repeat(10)}_a1b2c3`,
  },
  "worst unicode": {
    server: "服".repeat(48),
    tool: '工具🔧"\\\u0001'.repeat(60),
    namespaced: "n".repeat(64),
  },
};

const BUDGETS = [
  512,
  513,
  600,
  700,
  1000,
  2048,
  4096,
  32768,
  65536,
  1 << 20,
  ...Array.from({ length: 10 }, () => 512 + Math.floor(random() * ((1 << 20) - 512))),
];

function callId(): string {
  return Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("");
}

Deno.test("buildReceipt() never exceeds the budget, keeps callId and isError, previews a prefix", async (t) => {
  for (const [shape, result] of Object.entries(SHAPES)) {
    await t.step(shape, () => {
      const originalBytes = bytesOf(result);
      const fullText = textContent(result);
      for (const [label, names] of Object.entries(NAMES)) {
        for (const budget of BUDGETS) {
          for (const original of [originalBytes, Number.MAX_SAFE_INTEGER]) {
            const input: ReceiptInput = {
              result,
              originalBytes: original,
              callId: callId(),
              ...names,
              budget,
            };
            const receipt = buildReceipt(input);
            const where = `${label} names, budget ${budget}`;
            const size = bytesOf(receipt);
            assert.ok(size <= budget, `${where}: ${size} bytes`);

            const structured = receipt.structuredContent;
            assert.equal(structured.status, "stored");
            assert.equal(structured.callId, input.callId);
            assert.equal(structured.originalBytes, original);
            assert.equal(structured.budgetBytes, budget);
            assert.equal(receipt.content.length, 1);
            assert.ok(receipt.content[0].text.includes(input.callId), where);
            assert.ok(receipt.content[0].text.includes("get_result"), where);
            assert.equal(receipt.isError, typeof result.isError === "boolean" ? result.isError : undefined);
            assert.equal("isError" in receipt, typeof result.isError === "boolean");

            // Names go together; if they were dropped, they would not have fit.
            if (structured.server === undefined) {
              assert.equal(structured.tool, undefined);
              assert.equal(structured.namespaced, undefined);
              assert.equal(structured.nextAction, undefined);
              const withNames = {
                ...receipt,
                structuredContent: { ...structured, ...names, preview: undefined },
              };
              assert.ok(bytesOf(withNames) > budget, `${where}: names dropped needlessly`);
            } else {
              assert.deepEqual(
                { server: structured.server, tool: structured.tool, namespaced: structured.namespaced },
                names,
              );
            }
            if (budget >= 4096 && label === "typical") assert.ok(structured.nextAction, where);

            const preview = structured.preview;
            if (fullText === undefined || fullText === "") {
              assert.equal(preview, undefined, where);
              continue;
            }
            if (preview !== undefined) {
              assert.ok(preview.length > 0, where);
              assert.ok(fullText.startsWith(preview), `${where}: preview is not a prefix`);
            }
            const shown = preview?.length ?? 0;
            if (shown < fullText.length) {
              // Cut on a code point boundary, and as long as the budget allows.
              assert.notEqual(nextCodePointEnd(fullText, shown - 1), shown + 1, `${where}: split a pair`);
              const longer = fullText.slice(0, nextCodePointEnd(fullText, shown));
              const grown = { ...receipt, structuredContent: { ...structured, preview: longer } };
              assert.ok(bytesOf(grown) > budget, `${where}: preview could be longer`);
            }
          }
        }
      }
    });
  }
});

Deno.test("buildReceipt() fits 512 bytes with worst-case names and keeps the retrieval facts", () => {
  const receipt = buildReceipt({
    result: { content: [{ type: "text", text: "😀".repeat(10_000) }], isError: true },
    originalBytes: Number.MAX_SAFE_INTEGER,
    callId: "3f9a1c2e7b804d5e9f1a2b3c4d5e6f70",
    ...NAMES["worst unicode"],
    budget: MIN_BUDGET_BYTES,
  });
  assert.ok(bytesOf(receipt) <= 512);
  assert.deepEqual(Object.keys(receipt.structuredContent), [
    "status",
    "callId",
    "originalBytes",
    "budgetBytes",
    "preview",
  ]);
  assert.equal(
    receipt.content[0].text,
    `Result stored: ${Number.MAX_SAFE_INTEGER} bytes exceeded the 512-byte response budget. ` +
      "Retrieve it with get_result using callId 3f9a1c2e7b804d5e9f1a2b3c4d5e6f70 and cursor 0.",
  );
  assert.equal(receipt.isError, true);
});

Deno.test("buildReceipt() at the default budget keeps every field, in the documented order", () => {
  const receipt = buildReceipt({
    result: { content: [{ type: "text", text: giantJson }] },
    originalBytes: 184320,
    callId: "3f9a1c2e7b804d5e9f1a2b3c4d5e6f70",
    ...NAMES.typical,
    budget: 32768,
  });
  assert.deepEqual(Object.keys(receipt.structuredContent), [
    "status",
    "callId",
    "server",
    "tool",
    "namespaced",
    "originalBytes",
    "budgetBytes",
    "preview",
    "nextAction",
  ]);
  assert.equal(
    receipt.structuredContent.nextAction,
    "Call get_result with this callId and cursor 0, then continue with each nextCursor until done is true.",
  );
  const size = bytesOf(receipt);
  assert.ok(size <= 32768 && size > 32768 - 8, `the preview fills the budget: ${size}`);
  assert.ok(!("isError" in receipt));
});

Deno.test("buildReceipt() rejects budgets below 512 bytes", () => {
  for (const budget of [0, 1, 511, 512.5, Number.NaN]) {
    assert.throws(
      () => buildReceipt({ result: {}, originalBytes: 1, callId: "0".repeat(32), ...NAMES.typical, budget }),
      RangeError,
    );
  }
});
