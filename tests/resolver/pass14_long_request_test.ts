/**
 * The fourteenth ranking pass, part A (issue #42, changes 320–339): when `resolve_tool` answers a long request,
 * most of it story, whose first tool is right. Each change lets such a request through as `ambiguous`, never
 * `confident`, and keeps off-topic requests declined.
 */
import assert from "node:assert/strict";
import { assess, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";

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
