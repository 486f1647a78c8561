/**
 * Property test: every text function of the resolver completes on adversarial input (up to 1 MiB of one
 * class, alternations, mixed scripts) and keeps its bounds (a word's parts, a clip's length). Before the
 * fix, 256 KiB of "D" took ~120 s in `splitIdentifier` alone: that these stay linear is timed, as a ratio
 * against plain text of the same size, by `deno task bench bounds` (scripts/bench/bounds_bench.ts).
 */
import assert from "node:assert/strict";
import { buildCatalog, type ToolDefinition } from "../../src/catalog/mod.ts";
import {
  assess,
  buildIndex,
  buildIndexAsync,
  clipText,
  MAX_PART_CHARS,
  type RankedQuery,
  rankQuery,
  splitWords,
} from "../../src/resolver/mod.ts";
import { fixtureServers } from "./_fixture.ts";
import { adversarial, MIB, textFunctions } from "./_adversarial.ts";

Deno.test("every resolver text function is linear or bounded on adversarial strings", async (t) => {
  // `assess` as textFunctions() has it ranks the input again (the bench times it so); here it assesses
  // the ranking `rankQuery` just made of the same input: the same call, made once.
  const functions = textFunctions().filter(([name]) => name !== "assess");
  for (const [name, input] of adversarial()) {
    await t.step(name, () => {
      for (const [fn, f] of functions) {
        const out = f(input);
        if (fn === "rankQuery") assess(out as RankedQuery);
      }
      assert.ok(new TextEncoder().encode(clipText(input, 256).text).length <= 256, name);
      for (const word of splitWords(input)) {
        for (const part of word.parts) {
          assert.ok(part.length <= MAX_PART_CHARS, `part of ${part.length} chars`);
        }
      }
    });
  }
});

Deno.test("a hostile tool description is indexed and the other tools still rank", async () => {
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
  const index = buildIndex(tools);
  const asyncIndex = await buildIndexAsync(tools);
  assert.deepEqual([...asyncIndex.postings.keys()].sort(), [...index.postings.keys()].sort());
  assert.equal(rankQuery(index, "read a text file").hits[0]?.tool.namespaced, "filesystem__read_text_file");
});
