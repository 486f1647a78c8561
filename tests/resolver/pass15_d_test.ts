/**
 * The fifteenth ranking pass, part D (issue #42, changes 420–439): off-topic near misses, requests a user of the
 * catalog could ask that no tool does ("multiply" where only a sum tool exists, "delete a file" where the file
 * server has no delete). Each is declined by general evidence; the answerable requests next to them are not.
 */
import assert from "node:assert/strict";
import { assess, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex, serverIndex, tool } from "./_bench_catalog.ts";

/** `resolve_tool`'s status and first tool for a request. */
function route(index: ResolverIndex, request: string): [string, string | undefined] {
  const ranked = rankQuery(index, request, { maxHits: 5 });
  return [assess(ranked).status, ranked.hits[0]?.tool.short];
}

Deno.test("420: a product, quotient or difference is no sum, and its operator word no other sense (#42)", async () => {
  const reference = await benchIndex("plain_catalog.json");
  // Read as a sum, "times" also a time: `get-sum`, then `get_file_info` ("… modification times").
  assert.equal(route(reference, "17 × 23?")[0], "no_match");
  assert.equal(route(reference, "what's 37 times 48")[0], "no_match");
  assert.equal(route(reference, "what is 100 divided by 4")[0], "no_match");
  // A sum is still the sum tool's.
  assert.deepEqual(route(reference, "what is 17 plus 25"), ["ambiguous", "get-sum"]);
  assert.deepEqual(route(reference, "whats 1234 + 5678")[1], "get-sum");
  // A tool that multiplies answers a product.
  const calculator = serverIndex("calculator", "Arithmetic on two numbers", [
    tool("add", "Add two numbers and return the sum"),
    tool("multiply", "Multiply two numbers and return the product"),
  ]);
  assert.equal(route(calculator, "what's 37 times 48")[1], "multiply");
  assert.equal(route(calculator, "17 × 23?")[1], "multiply");
  assert.equal(route(calculator, "what is 17 plus 25")[1], "add");
});
