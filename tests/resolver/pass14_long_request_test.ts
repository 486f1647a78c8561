/**
 * The fourteenth ranking pass, part A (issue #42, changes 320–339): when `resolve_tool` answers a long request,
 * most of it story, whose first tool is right. Each change lets such a request through as `ambiguous`, never
 * `confident`, and keeps off-topic requests declined.
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { assess, buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

/** `resolve_tool`'s status and first tool for a request. */
function route(index: ResolverIndex, request: string): [string, string | undefined] {
  const ranked = rankQuery(index, request, { maxHits: 5 });
  return [assess(ranked).status, ranked.hits[0]?.tool.short];
}

Deno.test("320: a clause the first tool covers as a confident route would is no incidental match (#42)", async () => {
  const digitalocean = await benchIndex("blind19_catalog.json");
  assert.deepEqual(
    route(
      digitalocean,
      "Spin up a fresh ubuntu-24-04-x64 box in fra1, s-2vcpu-4gb, named load-test-runner-3, with my ssh key " +
        "41022883 and monitoring on.",
    ),
    ["ambiguous", "droplet-create"],
  );
  const salesforce = await benchIndex("blind18_catalog.json");
  assert.deepEqual(
    route(
      salesforce,
      "The reps complained on Slack that they can't see Discount_Approval__c on Opportunity. Give the 'Sales User' " +
        "profile read access to it, but they shouldn't be able to edit it.",
    ),
    ["ambiguous", "manage_field_permissions"],
  );
  // Off-topic: one word of the clause ("changes") is not a route.
  const blind5 = await benchIndex("blind5_catalog.json");
  assert.equal(route(blind5, "commit my changes and push them to github")[0], "no_match");
});

Deno.test("321: a clause asking for the first tool's action, its object named in the story, is a route (#42)", async () => {
  const woocommerce = await benchIndex("blind18_catalog.json");
  assert.deepEqual(
    route(
      woocommerce,
      "Someone on Twitter complained that their review of the ceramic pour-over never showed up. I think reviews " +
        "got stuck in moderation. show me the ones that are still pending?",
    ),
    ["ambiguous", "woo_products_reviews_list"],
  );
  // A question's reading is no action asked for: "which of them mention …" and a tool getting mentions.
  const index = buildIndex(buildCatalog([{
    name: "chat",
    tags: [],
    useWhen: [],
    tools: [
      tool("get_my_mentions", "Get recent messages that mention the authenticated user"),
      tool("post_message", "Post a message to a channel"),
    ],
  }]));
  assert.equal(
    route(
      index,
      "My old boss sent me a dozen Word documents over the years and I saved them all under /home/lukas/Work. " +
        "Which of them mention the Hoffmann project anywhere in the text? I can't remember any of the file names.",
    )[0],
    "no_match",
  );
});
