/**
 * The fifteenth ranking pass, part F (issue #42, 460–479): the steps of one request share the first five
 * places.
 */
import assert from "node:assert/strict";
import { rankQuery } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";

/** The first five tools' short names for a request over the reference servers. */
async function firstFive(request: string): Promise<string[]> {
  const index = await benchIndex("plain_catalog.json");
  return rankQuery(index, request, { maxHits: 5 }).hits.map((h) => h.tool.short);
}

Deno.test("460: a step's near-duplicate yields its place to the next step's tool (#42)", async () => {
  // Two steps (make the file, then chmod it). `read_text_file` and `read_multiple_files` nearly repeat each
  // other (one server, one action, one object); before 460 both held places and `write_file` was 6th.
  const five = await firstFive(
    'make scripts/seed.sh with this:\n#!/bin/sh\nset -e\npsql "$DATABASE_URL" -f db/seed.sql\n\nthen chmod it so i can run it',
  );
  assert.ok(five.includes("write_file"), five.join(" "));
  assert.equal(five.filter((t) => t === "read_text_file" || t === "read_multiple_files").length, 1);
});

Deno.test("460: a request of one step keeps its near-duplicates (#42)", async () => {
  // A story, then one ask: one step; the image reader stays beside the text reader.
  assert.ok(
    (await firstFive("can you look at screenshot.png on my Desktop and tell me what error it shows"))
      .includes("read_media_file"),
  );
  // One asking clause after statements: `list_directory_with_sizes` stays with `list_directory`.
  assert.ok(
    (await firstFive(
      "My laptop keeps warning me the disk is nearly full. I think it's the videos I saved from the kids' recital in /home/mark/Videos. Which files in there are the biggest? List them largest first.",
    )).includes("list_directory_with_sizes"),
  );
});
