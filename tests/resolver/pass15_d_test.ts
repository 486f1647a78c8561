/**
 * The fifteenth ranking pass, part D (issue #42, changes 420–439): off-topic near misses, requests a user of the
 * catalog could ask that no tool does ("multiply" where only a sum tool exists, "delete a file" where the file
 * server has no delete). Each is declined by general evidence; the answerable requests next to them are not.
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { assess, buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
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

Deno.test("421: a file acted on where no tool performs that action on a file is declined (#42)", async () => {
  const reference = await benchIndex("plain_catalog.json");
  // The file server deletes nothing; the memory server's `delete_entities` matched "delete" and came first.
  assert.equal(route(reference, "delete build/old.log, we don't need it anymore")[0], "no_match");
  assert.equal(
    route(reference, "delete /home/dana/Downloads/old_installer.dmg, i don't need it anymore")[0],
    "no_match",
  );
  assert.equal(route(reference, "nuke ~/tmp/old-build.zip")[0], "no_match");
  // An action a file tool performs, or refused ("don't overwrite"), or on no file, is still answered.
  assert.notEqual(route(reference, "rename ~/Desktop/draft.docx to thesis_v3.docx")[0], "no_match");
  assert.deepEqual(
    route(reference, "don't overwrite log.txt! just replace the line 'status: pending' with 'status: done'"),
    ["ambiguous", "edit_file"],
  );
  assert.notEqual(route(reference, "forget the entity Bob")[0], "no_match");
  // A file server that deletes answers the same request.
  const files = {
    name: "files",
    description: "Files on disk",
    tags: [],
    useWhen: [],
    tools: [
      { ...tool("delete_file", "Delete a file"), inputSchema: { type: "object", properties: { path: {} } } },
      { ...tool("read_file", "Read a file"), inputSchema: { type: "object", properties: { path: {} } } },
    ],
  };
  const index = buildIndex(buildCatalog([files]));
  assert.deepEqual(route(index, "delete build/old.log, we don't need it anymore"), [
    "ambiguous",
    "delete_file",
  ]);
});

Deno.test("422: a tool matching no word, there by its action only, with nothing named to act on, is no answer (#42)", async () => {
  // `create-engagement` and `upsert-records` write; nothing of theirs is a haiku or autumn.
  assert.equal(
    route(await benchIndex("blind7_catalog.json"), "write me a haiku about autumn")[0],
    "no_match",
  );
  assert.equal(
    route(await benchIndex("blind9_catalog.json"), "write me a haiku about autumn")[0],
    "no_match",
  );
  // The same evidence with names, a stated value or a channel to act on is still answered.
  const reference = await benchIndex("plain_catalog.json");
  assert.deepEqual(route(reference, "link Ana to Acme"), ["ambiguous", "create_relations"]);
  assert.deepEqual(route(reference, "connect Project Falcon to Lena as its owner"), [
    "ambiguous",
    "create_relations",
  ]);
  assert.deepEqual(route(reference, "note down that the release is on Friday"), [
    "ambiguous",
    "add_observations",
  ]);
});

Deno.test("423: an object store's key is a file's place too: its delete answers a path (#42)", () => {
  const store = {
    name: "s3",
    description: "Object storage",
    tags: [],
    useWhen: [],
    tools: [
      {
        ...tool("delete_object", "Delete an object from a bucket"),
        inputSchema: { type: "object", properties: { Bucket: {}, Key: {} } },
      },
      { ...tool("list_buckets", "List the buckets"), inputSchema: { type: "object" } },
    ],
  };
  const index = buildIndex(buildCatalog([store]));
  assert.deepEqual(route(index, "delete backups/old.tar.gz from the bucket")[1], "delete_object");
  assert.notEqual(route(index, "delete backups/old.tar.gz from the bucket")[0], "no_match");
});
