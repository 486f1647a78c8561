import assert from "node:assert/strict";
import { glossChinese, hasChinese } from "../../src/resolver/zh_gloss.ts";
import { buildIndex, parseQuery, rankQuery, resolveResponse, stem } from "../../src/resolver/mod.ts";
import { ZH_GLOSS_WEIGHT } from "../../src/resolver/query.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";
import { firstGloss, MAX_BYTES } from "../../scripts/gen_zh_glossary.ts";

const data = (name: string) => new URL(`../../scripts/bench/data/${name}`, import.meta.url);

Deno.test("the generated Chinese glossary stays within its size bound", async () => {
  const bytes = (await Deno.stat(new URL("../../src/resolver/zh_gloss_data.json", import.meta.url))).size;
  assert.ok(bytes <= MAX_BYTES && MAX_BYTES <= 1_100_000, `${bytes} bytes`);
});

Deno.test("glossChinese: English glosses of the Chinese words, in order, by longest match", () => {
  assert.equal(glossChinese("天气预报"), "weather forecast");
  assert.equal(glossChinese("获取当前日期"), "gain the present time date");
  const smzdm = glossChinese("获取什么值得买热门");
  assert.match(smzdm, /\bworth\b.*\bbuy\b.*\bpopular\b/);
  // Stop words are consumed and gloss to nothing; other text is skipped.
  assert.equal(glossChinese("的"), "");
  assert.equal(glossChinese("查询 weather 的天气"), "check weather");
  assert.equal(glossChinese("no chinese here"), "");
  assert.ok(hasChinese("查询") && !hasChinese("query"));
});

Deno.test("gen_zh_glossary firstGloss: the first sense that translates, cleaned", () => {
  assert.equal(firstGloss(["surname Wang", "king"]), "king");
  assert.equal(firstGloss("to obtain; to get"), "obtain");
  assert.equal(firstGloss("weather forecast (on TV)"), "weather forecast");
  assert.equal(firstGloss("(archaic) I; me"), "me");
  assert.equal(firstGloss("variant of 那[na4]"), undefined);
  assert.equal(firstGloss("a very long explanation of the word"), undefined);
});

// Tools of two public servers described in Chinese, as LiveMCPBench recorded their tools/list, beside the
// pinned reference servers and the public English servers of the first held-out set.
const servers = [
  ...JSON.parse(await Deno.readTextFile(data("heldout_catalog.json"))).servers,
  ...JSON.parse(await Deno.readTextFile(data("zh_servers_catalog.json"))).servers,
];
const index = buildIndex(catalogFromJson({ servers }));
const top = (query: string, n = 1) => rankQuery(index, query).hits.slice(0, n).map((h) => h.tool.namespaced);

Deno.test("an English request reaches a tool described only in Chinese", () => {
  // 什么值得买 "what is worth buying"; 机核网游戏相关资讯 "gcores: news about games".
  assert.deepEqual(top("recommend deals on products worth buying"), ["trends-hub__get-smzdm-rank"]);
  assert.deepEqual(top("new video game reviews and gaming culture articles"), ["trends-hub__get-gcores-new"]);
});

Deno.test("glosses leave an English tool of the same subject first", () => {
  assert.deepEqual(top("what is the current time in Tokyo"), ["time__get_current_time"]);
});

// The second held-out set's catalog: twenty public English servers' tool lists.
const english = buildIndex(
  catalogFromJson(JSON.parse(await Deno.readTextFile(data("heldout2_catalog.json")))),
);

Deno.test("a request written in Chinese reaches English tools through its words' glosses", () => {
  const first = (query: string) => rankQuery(english, query).hits[0];
  // "Remove these keys from the cache": no English word at all.
  const del = first("从缓存中删除这些键")!;
  assert.equal(del.tool.namespaced, "redis__delete");
  // Its unknown character bigrams ("中删", "这些") are no misses: the glosses carry the request.
  assert.ok(del.coverage >= 1 / 3, `coverage ${del.coverage}`);
  assert.equal(
    first("在 GitLab 上从 feature-x 向 main 发起合并请求")?.tool.namespaced,
    "gitlab__create_merge_request",
  );
  const parsed = parseQuery("删除缓存");
  const gloss = parsed.terms.find((t) => t.term === stem("cache"));
  assert.equal(gloss?.weight, ZH_GLOSS_WEIGHT);
});

Deno.test("an off-topic request in Chinese still matches nothing confidently", () => {
  for (const query of ["点一份大号意大利辣香肠披萨", "澳大利亚的首都是哪里"]) {
    assert.equal(
      resolveResponse(english, { query }, { contractVersion: "t", catalogRevision: "r" }).status,
      "no_match",
    );
  }
});
