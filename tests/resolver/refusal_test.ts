import assert from "node:assert/strict";
import { benchIndex } from "./_bench_catalog.ts";
import { rankQuery } from "../../src/resolver/mod.ts";
import { refusedWords } from "../../src/resolver/query.ts";

Deno.test("what a request says not to do or need is read out of it (233)", () => {
  assert.deepEqual([...refusedWords("only the names, i dont need values")], ["need", "values"]);
  assert.deepEqual([...refusedWords("unpublish it but DON'T delete it, we reuse it")], ["delete"]);
  // A word the request also uses elsewhere stays whole; "don't forget" and "… yet" refuse nothing.
  assert.deepEqual([...refusedWords("delete the page, don't delete the space")], ["space"]);
  assert.equal(refusedWords("don't forget that Ana moved").size, 0);
  assert.equal(refusedWords("draft the newsletter but do not send it yet").size, 0);
});

Deno.test("'i dont need values' asks for no tool that takes a value (233)", async () => {
  // Vercel, Netlify, Cloudflare and Coolify as recorded from their live `tools/list` (88 tools).
  const index = await benchIndex("blind14_catalog.json");
  const first = (q: string) => rankQuery(index, q).hits[0]?.tool.namespaced;
  assert.equal(
    first("which secrets are set on the auth worker? only the names, i dont need values"),
    "cloudflare__secret_list",
  );
});
