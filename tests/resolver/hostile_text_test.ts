/**
 * Property test: every text function of the resolver stays linear (or bounded) on adversarial input.
 * Before the fix, 256 KiB of "D" took ~120 s in `splitIdentifier` alone; each call here gets a budget
 * of 2 s, which a quadratic path over these sizes cannot meet but a linear one meets with a wide margin
 * even on a loaded machine.
 */
import assert from "node:assert/strict";
import { buildCatalog, type ToolDefinition } from "../../src/catalog/mod.ts";
import { extractLocators } from "../../src/resolver/locators.ts";
import { schemaWords } from "../../src/resolver/companions.ts";
import {
  assess,
  buildIndex,
  buildIndexAsync,
  clipText,
  fold,
  leadSentence,
  MAX_PART_CHARS,
  parseQuery,
  rankQuery,
  resolveResponse,
  searchResponse,
  splitClauses,
  splitWords,
  stem,
  tokenize,
} from "../../src/resolver/mod.ts";
import { seeded } from "../spool/_helpers.ts";
import { fixtureCatalog, fixtureServers } from "./_fixture.ts";

const BUDGET_MS = 2000;
const MIB = 1024 * 1024;

/** Single characters of every class the tokenizer, clause splitter and locator scanner treat differently. */
const CLASSES = [
  "D",
  "d",
  "7",
  " ",
  ".",
  "-",
  "_",
  "/",
  "\\",
  ":",
  ",",
  "\n",
  "\t",
  '"',
  "'",
  "“",
  "«",
  "é",
  "\u0301",
  "必",
  "ア",
  "한",
  "١",
  "Ж",
  "ж",
  "ǅ",
  "😀",
  "\u200b",
  "?",
  "!",
  "@",
  "%",
]; // deno-fmt-ignore

/** Named adversarial inputs: long runs of one class, alternations, mixed scripts, up to 1 MiB. */
function adversarial(): [string, string][] {
  const out: [string, string][] = [];
  for (const size of [256 * 1024, MIB]) {
    out.push([`${size} x "D"`, "D".repeat(size)]);
    out.push([`${size} x "aB"`, "aB".repeat(size / 2)]);
    out.push([`${size} x "DDd"`, "DDd".repeat(Math.floor(size / 3))]);
    out.push([`${size} spaces then x`, " ".repeat(size) + "x"]);
    out.push([`${size} dots then x`, ".".repeat(size) + "x"]);
    out.push([`${size} x ". a"`, ". a".repeat(Math.floor(size / 3))]);
    out.push([`${size} x " and"`, " and".repeat(size / 4)]);
    out.push([`${size} x "/a"`, " /a".repeat(Math.floor(size / 3))]);
    out.push([`${size} url dots`, "https://a" + ".".repeat(size) + "x"]);
    out.push([`${size} host labels`, "a.".repeat(size / 2) + "x"]);
    out.push([`${size} long label then dot`, ("a".repeat(62) + "-").repeat(Math.floor(size / 63)) + ".x"]);
    out.push([`${size} quotes`, '"'.repeat(size)]);
    out.push([`${size} combining marks`, "e" + "\u0301".repeat(size)]);
    out.push([`${size} CJK`, "必应搜索".repeat(size / 4)]);
    // Words that match, so ranking runs on the whole text (the enumeration rule was quadratic in such a run).
    out.push([`${size} words then CJK`, "search files " + "必应搜索".repeat(size / 4)]);
  }
  const rand = seeded(17);
  for (let k = 0; k < 6; k++) {
    // Mixed scripts: runs of random classes, random lengths.
    let s = "";
    while (s.length < MIB) s += CLASSES[Math.floor(rand() * CLASSES.length)]!.repeat(1 + Math.floor(rand() ** 4 * 5000));
    out.push([`mixed ${k}`, s]);
  }
  return out;
}

function timed<T>(label: string, f: () => T): T {
  const start = performance.now();
  const value = f();
  const ms = performance.now() - start;
  assert.ok(ms < BUDGET_MS, `${label} took ${ms.toFixed(0)} ms (budget ${BUDGET_MS} ms)`);
  return value;
}

Deno.test("every resolver text function is linear or bounded on adversarial strings", async (t) => {
  const index = buildIndex(fixtureCatalog());
  const context = { contractVersion: "1", catalogRevision: "x" };
  const functions: [string, (s: string) => unknown][] = [
    ["fold", fold],
    ["stem", stem],
    ["splitWords", splitWords],
    ["tokenize", tokenize],
    ["splitClauses", splitClauses],
    ["parseQuery", parseQuery],
    ["extractLocators", extractLocators],
    ["leadSentence", leadSentence],
    ["clipText", (s) => clipText(s, 256)],
    ["schemaWords", (s) => schemaWords({ properties: { [s]: { description: s } } })],
    ["rankQuery", (s) => rankQuery(index, s)],
    ["assess", (s) => assess(rankQuery(index, s))],
    // The gateway refuses a query over 2,048 bytes; the refusal must be cheap too.
    ["resolveResponse", (s) => {
      try {
        resolveResponse(index, { query: s }, context);
      } catch { /* refused */ }
    }],
    ["searchResponse", (s) => {
      try {
        searchResponse(index, { query: s }, context);
      } catch { /* refused */ }
    }],
  ]; // deno-fmt-ignore
  for (const [name, input] of adversarial()) {
    await t.step(name, () => {
      for (const [label, f] of functions) timed(`${label}(${name})`, () => f(input));
      for (const word of splitWords(input)) {
        for (const part of word.parts) assert.ok(part.length <= MAX_PART_CHARS, `part of ${part.length} chars`);
      }
    });
  }
});

Deno.test("a hostile tool description is indexed in bounded time and the other tools still rank", async () => {
  const hostile: ToolDefinition = {
    name: "hostile",
    description: "D".repeat(MIB),
    inputSchema: {
      type: "object",
      properties: { ["D".repeat(MIB)]: { type: "string", description: "aB".repeat(MIB / 2) } },
    },
  }; // deno-fmt-ignore
  const servers = fixtureServers();
  servers.push({ name: "evil", description: "E".repeat(MIB), tags: [], useWhen: [], tools: [hostile] });
  const tools = buildCatalog(servers);
  const index = timed("buildIndex", () => buildIndex(tools));
  const asyncIndex = await buildIndexAsync(tools);
  assert.deepEqual([...asyncIndex.postings.keys()].sort(), [...index.postings.keys()].sort());
  assert.equal(rankQuery(index, "read a text file").hits[0]?.tool.namespaced, "filesystem__read_text_file");
});
