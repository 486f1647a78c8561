/**
 * When `resolve_tool` answers (issue #42, twelfth pass, part A): a request whose verb and object are both a
 * tool's own is answerable — `ambiguous` with that tool recommended, never `no_match` — while a request whose
 * object merely names a tool's object, with another action asked for, is still declined.
 *
 * @module
 */
import assert from "node:assert/strict";
import { buildIndex, resolveResponse, type ResolverIndex } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const indexes = new Map<string, ResolverIndex>();

async function resolve(catalog: string, query: string) {
  let index = indexes.get(catalog);
  if (!index) {
    const data = new URL(`../../scripts/bench/data/${catalog}`, import.meta.url);
    index = buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(data))));
    indexes.set(catalog, index);
  }
  const r = resolveResponse(index, { query }, { contractVersion: "test", catalogRevision: "test" });
  return { status: r.status, tool: r.recommendation?.namespaced };
}

// 150: the tool performs the request's action and its name's object is a word of the request.
Deno.test('150: "spin up a dev branch …" is the branch-creating tool, offered, not no_match (#42)', async () => {
  assert.deepEqual(
    await resolve(
      "blind7_catalog.json",
      "spin up a dev branch so I can try the new schema without touching prod",
    ),
    { status: "ambiguous", tool: "supabase__create_branch" },
  );
});

Deno.test('150: "leave a comment on record …" is the comment-creating tool, offered (#42)', async () => {
  assert.deepEqual(
    await resolve("blind5_catalog.json", "leave a comment on record recA1B2 saying 'waiting for invoice'"),
    { status: "ambiguous", tool: "airtable__create_comment" },
  );
});

Deno.test("150: a request naming a tool's object with another action is still declined (#42)", async () => {
  // `get_order` reads orders; "order me a pizza" asks for no read: nothing here does it.
  assert.deepEqual(await resolve("blind7_catalog.json", "order me a large pepperoni pizza"), {
    status: "no_match",
    tool: undefined,
  });
  // The action met but not the object (`delete_entities` and a git branch): declined.
  assert.deepEqual(
    await resolve("plain_catalog.json", "delete the branch feature/login on github and close its PR"),
    { status: "no_match", tool: undefined },
  );
});

// 151: the request names the tool's server and half or more of its name's object, asking no other action.
Deno.test('151: "make an epic for it in shortcut" is the epic-creating tool, offered, not no_match (#42)', async () => {
  assert.deepEqual(
    await resolve(
      "blind10_catalog.json",
      "big chunk of work for the mobile redesign — make an epic for it in shortcut",
    ),
    { status: "ambiguous", tool: "shortcut__epics-create" },
  );
});

Deno.test("151: a server named with too little of a tool's object is still declined (#42)", async () => {
  // The YouTube server only reads; "channel" is one of `getChannelTopVideos`' three object words.
  assert.deepEqual(
    await resolve(
      "blind13_catalog.json",
      "upload my edited vlog from ~/Videos/trip.mp4 to my youtube channel as unlisted",
    ),
    { status: "no_match", tool: undefined },
  );
});

// 152: …the object met through a synonym counts as the object.
Deno.test('152: "make a folder called archive/2024" is create_directory, offered, not no_match (#42)', async () => {
  assert.deepEqual(await resolve("plain_catalog.json", "make a folder called archive/2024"), {
    status: "ambiguous",
    tool: "filesystem__create_directory",
  });
});

// 153: two request words in the tool's name, title or hints, half or more of its name's object, no other action.
Deno.test('153: "cancel subscripton sub_1Abc …" is cancel_subscription, offered, not no_match (#42)', async () => {
  assert.deepEqual(
    await resolve("blind5_catalog.json", "cancel subscripton sub_1Abc, the customer asked to stop"),
    {
      status: "ambiguous",
      tool: "stripe__cancel_subscription",
    },
  );
});

Deno.test("153: one word of a tool's name alone is still declined (#42)", async () => {
  // "text" is half of `read_text_file`'s object, and the only word matched.
  assert.deepEqual(await resolve("plain_catalog.json", "text my mom happy birthday"), {
    status: "no_match",
    tool: undefined,
  });
});

// 154: a request of several steps is answerable by a tool doing its first step's action on the locator it names.
Deno.test('154: "fix the typo in README.md: …" is edit_file, offered, not no_match (#42)', async () => {
  assert.deepEqual(
    await resolve("heldout2_catalog.json", "fix the typo in README.md: 'recieve' should be 'receive'"),
    {
      status: "ambiguous",
      tool: "filesystem__edit_file",
    },
  );
});

// 155: the tool performs every action asked and matches a request word that is no action, anywhere in its text.
Deno.test('155: "look up Acme in my knowledge graph" is search_nodes, offered, not no_match (#42)', async () => {
  assert.deepEqual(await resolve("plain_catalog.json", "look up Acme in my knowledge graph"), {
    status: "ambiguous",
    tool: "memory__search_nodes",
  });
});

Deno.test("155: the action met with no other word matched is still declined (#42)", async () => {
  assert.deepEqual(await resolve("plain_catalog.json", "change the oil in my car"), {
    status: "no_match",
    tool: undefined,
  });
  assert.deepEqual(await resolve("plain_catalog.json", "turn off the bedroom lights"), {
    status: "no_match",
    tool: undefined,
  });
});

// 156: a statement of a fact, with a tool performing every action the statement asks for.
Deno.test('156: "Omar no longer reports to Priya" is delete_relations, offered, not no_match (#42)', async () => {
  assert.deepEqual(await resolve("plain_catalog.json", "Omar no longer reports to Priya"), {
    status: "ambiguous",
    tool: "memory__delete_relations",
  });
});
