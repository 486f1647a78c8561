import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { isEnglishStem, isEnglishWord, oneEditAway } from "../../src/resolver/lexicon.ts";
import { ENGLISH_STEMMER_FINGERPRINT } from "../../src/resolver/english_data.ts";
import { stemmerFingerprint } from "../../src/resolver/lexicon.ts";
import { typoTerm } from "../../src/resolver/rank.ts";
import { ACTION, misspeltAction, requestAction } from "../../src/resolver/actions.ts";
import { buildIndex, rankQuery, stem } from "../../src/resolver/mod.ts";

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: "object" } });

const index = buildIndex(buildCatalog([{
  name: "ops",
  tags: [],
  useWhen: [],
  tools: [
    tool("schedule_downtime", "Schedule a downtime for hosts so monitors do not alert"),
    tool("list_hosts", "List the hosts reporting to the monitoring service"),
    tool("get_deployment", "Get the status of a deployment"),
    tool("list_events", "List the events of a calendar"),
    tool("react_chart_render", "Render a chart component"),
    tool("package_info", "Look up a package by name"),
  ],
}]));

const df = (term: string) => index.postings.get(term)?.docs.length ?? 0;

Deno.test("the English word filter matches the current stemmer and knows words, not typos", () => {
  assert.equal(ENGLISH_STEMMER_FINGERPRINT, stemmerFingerprint(), "rerun scripts/gen_english_words.ts");
  for (const word of ["schedule", "stored", "table", "saying", "calendar", "organised"]) {
    assert.ok(isEnglishWord(word, stem), word);
  }
  for (const word of ["newest", "biggest", "easier", "faster"]) assert.ok(isEnglishWord(word, stem), word);
  for (const word of ["shedule", "deploymnet", "overwite", "serach", "qwertyuiop"]) {
    assert.equal(isEnglishWord(word, stem), false, word);
  }
  assert.ok(isEnglishStem(stem("deployment")));
});

Deno.test("oneEditAway() gives deletions, swaps, replacements and insertions", () => {
  const edits = new Set(oneEditAway("ab"));
  for (const e of ["b", "a", "ba", "xb", "ax", "xab", "axb", "abx"]) assert.ok(edits.has(e), e);
  assert.equal(edits.has("ab"), false);
});

Deno.test("typoTerm(): a misspelt word reaches the catalog's word one edit away", () => {
  assert.equal(typoTerm("shedule", df), stem("schedule"));
  assert.equal(typoTerm("deploymnet", df), stem("deployment"), "a swap of neighbours");
  // A real word the catalog lacks is no typo; nor a short word, nor one whose first letter would change.
  assert.equal(typoTerm("stored", df), undefined);
  assert.equal(typoTerm("newest", df), undefined);
  assert.equal(typoTerm("evens", df), undefined);
  assert.equal(typoTerm("vevents", df), undefined);
});

Deno.test("a misspelt request word finds the tool its correct spelling names", () => {
  assert.equal(
    rankQuery(index, "shedule a maintenance window for the db hosts").hits[0]?.tool.tool,
    "schedule_downtime",
  );
  const ranked = rankQuery(index, "why is the orders deploymnet not ready");
  assert.equal(ranked.hits[0]?.tool.tool, "get_deployment");
});

Deno.test("a word inside an identifier or a request in another language is not corrected", () => {
  // `react-chartjs-2` names a package: "chartjs" is part of a name, not a misspelt "charts".
  const named = rankQuery(index, "look up the package react-chartjs-2 for my app");
  assert.equal(named.hits[0]?.tool.tool, "package_info");
  assert.ok(
    !named.hits.some((h) => h.tool.tool === "react_chart_render" && h.matchedTerms.includes("chartjs")),
  );
  // No English function word: the request may be in another language, whose words are not English typos.
  const foreign = rankQuery(index, "shedule downtime");
  assert.ok(
    foreign.hits.every((h) => h.tool.tool !== "schedule_downtime" || !h.matchedTerms.includes("shedule")),
  );
});

Deno.test("a misspelt action verb opening a request takes the action of the verb one edit away", () => {
  assert.equal(misspeltAction("remeber"), ACTION.create);
  assert.equal(misspeltAction("remmove"), ACTION.delete);
  assert.equal(misspeltAction("serach"), ACTION.search);
  // English words, short words and names are left alone.
  assert.equal(misspeltAction("removal"), 0);
  assert.equal(misspeltAction("delte"), 0);
  assert.equal(misspeltAction("priyanka"), 0);
  assert.equal(requestAction("remeber that my sister Lena is allergic to peanuts"), ACTION.create);
});
