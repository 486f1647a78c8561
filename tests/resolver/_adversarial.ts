/**
 * Adversarial text for the resolver's text functions (up to 1 MiB: long runs of one class, alternations,
 * mixed scripts) and the functions to run on it: shared by tests/resolver/hostile_text_test.ts (outcomes)
 * and scripts/bench/bounds_bench.ts (time, as a ratio against plain text of the same size).
 *
 * @module
 */
import { extractLocators } from "../../src/resolver/locators.ts";
import { schemaWords } from "../../src/resolver/companions.ts";
import {
  assess,
  buildIndex,
  clipText,
  fold,
  leadSentence,
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
import { fixtureCatalog } from "./_fixture.ts";

/** A mebibyte, in characters. */
export const MIB = 1024 * 1024;

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

/**
 * Named adversarial inputs: long runs of one class and alternations of each of `sizes` characters, and
 * mixed scripts of `mixed` (up to 1 MiB by default).
 */
export function adversarial(sizes: readonly number[] = [256 * 1024, MIB], mixed = MIB): [string, string][] {
  const out: [string, string][] = [];
  for (const size of sizes) {
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
    while (s.length < mixed) s += CLASSES[Math.floor(rand() * CLASSES.length)]!.repeat(1 + Math.floor(rand() ** 4 * 5000));
    out.push([`mixed ${k}`, s]);
  }
  return out;
}

/** Every text function of the resolver, by name, on the fixture catalog's index. */
export function textFunctions(): [string, (s: string) => unknown][] {
  const index = buildIndex(fixtureCatalog());
  const context = { contractVersion: "1", catalogRevision: "x" };
  return [
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
}
