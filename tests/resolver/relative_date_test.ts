import assert from "node:assert/strict";
import { buildIndex, rankQuery } from "../../src/resolver/mod.ts";
import {
  parseQuery,
  RELATIVE_DATE,
  RELATIVE_DATE_TERMS,
  RELATIVE_DATE_WEIGHT,
} from "../../src/resolver/query.ts";
import { stem } from "../../src/resolver/tokenize.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

Deno.test("RELATIVE_DATE matches a date counted from now, not an ordinal or this week", () => {
  for (
    const text of [
      "what failed over the past 3 days",
      "the release is due next Friday",
      "analyze the last 24h of BTC",
      "in the coming months",
      "commits from the previous week",
      "the date 90 days from now",
      "it broke two weeks ago",
      "over the last few days",
    ]
  ) {
    assert.ok(RELATIVE_DATE.test(text), text);
  }
  for (
    const text of [
      "show the last commit",
      "get the next page of results",
      "trending on Bilibili this week",
      "list past issues",
      "a 3 day trip",
      "read the previous version of config.yaml",
    ]
  ) {
    assert.equal(RELATIVE_DATE.test(text), false, text);
  }
});

Deno.test("parseQuery() implies today's date for a relative date, credited to its unit", () => {
  const q = parseQuery("which workflow runs failed over the past 3 days");
  const days = q.stems.indexOf(stem("days"));
  assert.ok(days >= 0);
  for (const term of RELATIVE_DATE_TERMS) {
    assert.deepEqual(q.terms.find((t) => t.term === term), {
      term,
      weight: RELATIVE_DATE_WEIGHT,
      origins: [days],
      expansion: true,
    });
  }
  const last = parseQuery("show the last commit on this branch");
  assert.equal(last.terms.some((t) => t.term === stem("date")), false);
});

Deno.test("rankQuery() brings the current-time tool up for a relative date", async () => {
  const catalog = new URL("../../scripts/bench/data/heldout2_catalog.json", import.meta.url);
  const index = buildIndex(catalogFromJson(JSON.parse(await Deno.readTextFile(catalog))));
  const top = (query: string) => rankQuery(index, query).hits.slice(0, 3).map((h) => h.tool.namespaced);
  const due = top("post in #team that the release is due next Friday");
  assert.equal(due[0], "slack__post_message");
  assert.ok(due.includes("time__get_current_time"), due.join(" "));
  assert.ok(!top("post in #team that the release is due on Friday").includes("time__get_current_time"));
});
