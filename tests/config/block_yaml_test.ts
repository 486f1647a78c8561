/**
 * The block-YAML reader (issue #16, start-up) against `yaml` itself: whatever it accepts, it must read
 * exactly as `yaml` does (node for node: kind, value, type, source), and the config read from it must equal
 * the one read through `yaml`; anything `yaml` rejects it must leave to `yaml`. Over every config in the
 * repository (files and the configs written inside tests and scripts) and generated, adversarial texts.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { readBlockYaml } from "../../src/config/block_yaml.ts";
import { readConfigFast } from "../../src/config/read.ts";
import { readConfigWithYaml } from "../../src/config/parse.ts";
import type { LoadOptions } from "../../src/config/mod.ts";
import { isAlias, isMap, isScalar, isSeq } from "../../src/config/yaml_nodes.ts";
import { prng, ROOT } from "../helpers.ts";

/** A node as plain data: what the config checks can see of it. */
function plain(node: unknown): unknown {
  if (node === null || node === undefined) return { none: node === null ? "null" : "undefined" };
  if (isScalar(node)) {
    const scalar = node as unknown as { value: unknown; source?: string };
    return { value: scalar.value, type: typeof scalar.value, source: scalar.source };
  }
  if (isMap(node)) {
    return { map: node.items.map((pair) => [plain(pair.key), plain(pair.value)]) };
  }
  if (isSeq(node)) return { seq: node.items.map(plain) };
  if (isAlias(node)) return { alias: String(node) };
  return { other: String(node) };
}

function yamlDocument(text: string) {
  return parseDocument(text, { lineCounter: new LineCounter(), prettyErrors: false, uniqueKeys: false });
}

/** Checks one text; returns whether the block reader took it. */
function check(text: string, label: string): boolean {
  const mine = readBlockYaml(text);
  if (!mine) return false;
  const doc = yamlDocument(text);
  assert.deepEqual(
    doc.errors.map((e) => e.message),
    [],
    `${label}: taken by the block reader, rejected by yaml`,
  );
  assert.deepEqual(plain(mine.contents), plain(doc.contents), `${label}: read differently\n${text}`);
  return true;
}

const ENV: Record<string, string> = { HOME: "/home/u", TOKEN: "t0k", PORT: "8080", EMPTY: "" };
const OPTIONS: LoadOptions = {
  env: { get: (name) => ENV[name] },
  cwd: "/work",
  home: "/home/u",
  serverErrors: "fail-server",
};

/** The config from the block reader, when it takes the text, equals the one read through `yaml`. */
function checkConfig(text: string, label: string): boolean {
  for (const expand of [true, false]) {
    const fast = readConfigFast(text, "mcphub.yaml", OPTIONS, { expand });
    if (!fast) return false;
    assert.deepEqual(fast, readConfigWithYaml(text, "mcphub.yaml", OPTIONS, { expand }), label);
  }
  return true;
}

async function* files(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* files(path);
    else yield path;
  }
}

/** Every YAML file of the repository, and every template literal of tests and scripts that reads as a mapping. */
async function corpus(): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for await (const path of files(ROOT)) {
    const name = relative(ROOT, path);
    if (/\.ya?ml$/.test(path)) texts.set(name, await Deno.readTextFile(path));
    if (!/^(tests|scripts)\/.*\.ts$/.test(name)) continue;
    const source = await Deno.readTextFile(path);
    let n = 0;
    for (const match of source.matchAll(/`((?:[^`\\]|\\.)*)`/gs)) {
      // Interpolations become a plain word, a quoted path or a number: each reads differently.
      const variants = ["word", '"/tmp/a b/x.js"', "42"].map((value) =>
        match[1]!.replace(/\$\{(?:[^{}]|\{[^{}]*\})*\}/g, value).replaceAll("\\`", "`").replaceAll(
          "\\\\",
          "\\",
        )
      );
      for (const text of variants) {
        if (!text.includes(":")) continue;
        texts.set(`${name}#${++n}`, text);
      }
    }
  }
  return texts;
}

Deno.test("readBlockYaml() reads every config of the repository as yaml does, or leaves it to yaml", async () => {
  const texts = await corpus();
  let taken = 0;
  let configs = 0;
  for (const [label, text] of texts) {
    if (check(text, label)) taken++;
    if (checkConfig(text, label)) configs++;
  }
  // The corpus is large and mostly in the subset (the count guards against a silently empty test).
  assert.ok(texts.size > 500, `corpus of ${texts.size}`);
  assert.ok(taken > 200, `${taken} of ${texts.size} taken`);
  assert.ok(configs > 40, `${configs} configs read by the block reader`);
});

Deno.test("readBlockYaml() takes the example config and the benchmark's", async () => {
  const example = await Deno.readTextFile(join(ROOT, "examples/mcphub.yaml"));
  assert.ok(check(example, "examples/mcphub.yaml"));
  assert.ok(checkConfig(example, "examples/mcphub.yaml"));
  const bench = `servers:
  everything:
    command: node
    args: ["/srv/a b/everything/dist/index.js", stdio]
  filesystem:
    command: node
    args: ["/srv/filesystem/dist/index.js", "/tmp/files"]
  memory:
    command: node
    args: ["/srv/memory/dist/index.js"]
    env:
      MEMORY_FILE_PATH: "/tmp/memory.jsonl"
`;
  assert.ok(check(bench, "bench") && checkConfig(bench, "bench"));
});

Deno.test("readBlockYaml() leaves everything outside its subset to yaml", () => {
  const outside = [
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: |\n  text\n",
    "a: >\n  text\n",
    "a: one\n  two\n",
    'a: "one\n  two"\n',
    "a: 1.5\n",
    "a: 0x1F\n",
    "a: 0o17\n",
    "a: .inf\n",
    "a: {b: 1}\n",
    "a: [b, [c]]\n",
    "a: [b,\n  c]\n",
    "a: 1\na: 2\n",
    "<<: {}\n",
    "a:\n\t- b\n",
    "a: 1\r\nb: 2\r\n",
    "---\na: 1\n",
    "%YAML 1.2\n---\na: 1\n",
    "? a\n: 1\n",
    "a b: 1\n",
    "1: x\n",
    "true: x\n",
    "a: b: c\n",
    "- a\n- b\n",
    "  a: 1\n",
    "a:\n  - - b\n",
    'a: "\\x41"\n',
    "a: [${HOME}]\n",
    "a: @b\n",
    "a:\n  b: 1\n c: 2\n",
    "a: 1\n  b: 2\n",
    "\ufeffa: 1\n",
  ];
  for (const text of outside) assert.equal(readBlockYaml(text), undefined, JSON.stringify(text));
});

Deno.test("readBlockYaml() reads an empty or comment-only file as yaml: no contents", () => {
  for (const text of ["", "\n", "# only a comment\n", "  \n# a\n\n"]) {
    assert.ok(check(text, JSON.stringify(text)), JSON.stringify(text));
    assert.equal(readBlockYaml(text)!.contents, null);
  }
});

const KEYS = [
  "a",
  "b",
  "servers",
  "command",
  "args",
  "env",
  "X-Api-Key",
  "MY_VAR",
  "a.b",
  "a/b",
  "1x",
  "123",
  "-1",
  "true",
  "null",
  "~",
  "yes",
  "a b",
  "-a",
  "é",
  '"q k"',
  "'s k'",
  '"a\\"b"',
  "<<",
  "?x",
  "a:b",
  "a#b",
  "1e3",
  "0x10",
  "",
];
const VALUES = [
  "x",
  "hello world",
  "a  b",
  "a#b",
  "a #c",
  "http://h:80/p",
  "${HOME}/x",
  "$${HOME}",
  "1",
  "-1",
  "+1",
  "-0",
  "0800",
  "99999999999999999999",
  "1.5",
  "1e3",
  "0x1F",
  "0o7",
  ".inf",
  ".nan",
  "~",
  "null",
  "Null",
  "NULL",
  "nULL",
  "true",
  "True",
  "TRUE",
  "tRUE",
  "false",
  "yes",
  "on",
  "-y",
  "--flag=1",
  "- x",
  "-",
  "?",
  "? x",
  ":x",
  "?x",
  "a: b",
  "a:",
  "a:b",
  "&anc x",
  "*alias",
  "!tag x",
  "|",
  ">",
  "@x",
  "`x",
  "%x",
  "[a, b]",
  "[]",
  "[ ]",
  "[a,b]",
  "[ a , 'b' ]",
  '["/a b", stdio]',
  "[a, [b]]",
  "[a,]",
  "[a b]",
  "[${X}]",
  '["${X}"]',
  "[-y, --x]",
  "[-, x]",
  "[1, true, ~, null]",
  "[a] b",
  "{a: 1}",
  "{}",
  "{ }",
  "'it''s'",
  "'a",
  "''",
  '""',
  '"a\\nb"',
  '"\\x41"',
  '"\\u00e9"',
  '"\\ud800"',
  '"\\"q\\""',
  '"a\\\\b"',
  '"a" b',
  '"a"#c',
  '"a" # c',
  "'a' # c",
  "x # y: z",
  "a,b",
  "a]b",
  "a}b",
  "a{b}",
  "'#'",
  "é",
  "x\u00a0",
  "\u00a0x",
  "---",
  "...",
  "a -- b",
  "# comment",
  "",
];

/** What configs are mostly made of: the generator takes these four times in five. */
const USUAL_KEYS = ["a", "b", "servers", "command", "args", "env", "X-Api-Key", "MY_VAR", '"q k"'];
const USUAL_VALUES = [
  "x",
  "hello world",
  "a#b",
  "a #c",
  "http://h:80/p",
  "${HOME}/x",
  "1",
  "0800",
  "true",
  "~",
  "-y",
  "[a, b]",
  '["/a b", stdio]',
  "[reading or editing files, user's notes (local)]",
  "[]",
  "'it''s'",
  '"a\\nb"',
  "",
];

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)]!;
}

function key(next: () => number): string {
  return pick(next, next() < 0.8 ? USUAL_KEYS : KEYS);
}

function value(next: () => number): string {
  return pick(next, next() < 0.8 ? USUAL_VALUES : VALUES);
}

/** Mostly well-formed block documents, with wrong indentation, stray lines and odd scalars mixed in. */
function generate(next: () => number): string {
  const lines: string[] = [];
  const emit = (indent: number, depth: number): void => {
    const count = 1 + Math.floor(next() * 4);
    const list = next() < 0.3;
    for (let i = 0; i < count; i++) {
      let pad = " ".repeat(indent);
      if (next() < 0.05) pad = " ".repeat(Math.max(0, indent + pick(next, [-1, 1, 2]))); // wrong indentation
      if (next() < 0.08) lines.push(pick(next, ["", "# note", `${pad}# note`, "   ", `${pad}  # deeper`]));
      const k = key(next);
      const nested = depth < 3 && next() < 0.35;
      const gap = next() < 0.8 ? " " : pick(next, ["  ", "   "]);
      if (list) {
        const column = indent + 1 + gap.length;
        if (next() < 0.3) {
          // `- key: value`, and the mapping's next key at the first one's column (or off by one)
          if (nested && next() < 0.5) {
            lines.push(`${pad}-${gap}${k}:`);
            emit(column + pick(next, [0, 2]), depth + 1);
          } else {
            lines.push(`${pad}-${gap}${k}: ${value(next)}`);
          }
          const shift = next() < 0.05 ? pick(next, [-1, 1]) : 0;
          if (next() < 0.7) lines.push(`${" ".repeat(column + shift)}${key(next)}:${gap}${value(next)}`);
        } else if (nested) {
          lines.push(`${pad}-`);
          emit(indent + pick(next, [2, 4]), depth + 1);
        } else {
          lines.push(`${pad}-${gap}${value(next)}`);
        }
      } else if (nested) {
        lines.push(`${pad}${k}:${next() < 0.2 ? " # c" : ""}`);
        emit(indent + pick(next, [0, 2, 2, 4]), depth + 1);
      } else {
        lines.push(`${pad}${k}:${gap}${value(next)}${next() < 0.1 ? "  " : ""}`);
      }
    }
  };
  emit(0, 0);
  return lines.join("\n") + (next() < 0.9 ? "\n" : "");
}

Deno.test("readBlockYaml() reads generated documents as yaml does, or leaves them to yaml", () => {
  let taken = 0;
  // FUZZ_RUNS=100000 for a longer run by hand.
  const runs = Number(Deno.env.get("FUZZ_RUNS") ?? 4000);
  for (let seed = 1; seed <= runs; seed++) {
    const text = generate(prng(seed));
    if (check(text, `seed ${seed}`)) taken++;
    checkConfig(text, `seed ${seed}`);
  }
  // Both sides are exercised: many texts are taken, many are left to yaml.
  assert.ok(taken > runs / 5 && taken < runs * 0.8, `${taken} of ${runs} taken`);
});

Deno.test("readBlockYaml() reads each generated scalar as yaml does, as a value, an item and a key", () => {
  for (const value of VALUES) {
    for (const text of [`k: ${value}\n`, `k:\n  - ${value}\n`, `k:\n- ${value}\n`, `${value}: v\n`]) {
      check(text, JSON.stringify(text));
    }
  }
  for (const key of KEYS) check(`${key}: v\n`, key);
});
