import assert from "node:assert/strict";
import { chineseWords, glossChinese, hasChinese } from "../../src/resolver/zh_gloss.ts";
import { buildIndex, parseQuery, rankQuery, resolveResponse, stem } from "../../src/resolver/mod.ts";
import { ZH_GLOSS_WEIGHT, ZH_SENSE_WEIGHT } from "../../src/resolver/query.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";
import { MAX_BYTES, MAX_SENSES, senses } from "../../scripts/zh_senses.ts";

const data = (name: string) => new URL(`../../scripts/bench/data/${name}`, import.meta.url);

Deno.test("the generated Chinese glossary stays within its size bound", async () => {
  const bytes = (await Deno.stat(new URL("../../src/resolver/zh_gloss_data.json", import.meta.url))).size;
  assert.ok(bytes <= MAX_BYTES && MAX_BYTES <= 1_800_000, `${bytes} bytes`);
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

Deno.test("glossChinese: each word's first sense the catalog uses, else its first", () => {
  assert.deepEqual(chineseWords("获取频道"), [
    { word: "获取", senses: ["gain", "get", "acquire"] },
    { word: "频道", senses: ["frequency", "channel"] },
  ]);
  const known = (sense: string) => ["get", "channel"].includes(sense);
  assert.equal(glossChinese("获取频道", known), "get channel");
  assert.equal(glossChinese("获取频道", () => false), "gain frequency");
  // A GB2312 level-2 character (浏) no longer leaves a common word out.
  assert.equal(glossChinese("浏览器"), "browser");
});

Deno.test("gen_zh_glossary senses: the senses that translate, cleaned, the first first", () => {
  assert.deepEqual(senses(["surname Wang", "king"]), ["king"]);
  assert.deepEqual(senses("to obtain; to get"), ["obtain", "get"]);
  assert.deepEqual(senses("weather forecast (on TV)"), ["weather forecast"]);
  assert.deepEqual(senses("(archaic) I; me"), ["me"]);
  assert.deepEqual(senses("frequency; (television) channel"), ["frequency", "channel"]);
  assert.deepEqual(senses("to gain; to get; to acquire; to obtain; to win").length, MAX_SENSES);
  // A long sense is an explanation: skipped after the first, and the word left out when it is the first.
  assert.deepEqual(senses("short; a very long explanation of the word; long"), ["short", "long"]);
  assert.deepEqual(senses("a very long explanation of the word; short"), []);
  assert.deepEqual(senses("variant of 那[na4]"), []);
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

const meta = { contractVersion: "t", catalogRevision: "r" };

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

Deno.test("a Chinese tool is glossed in the words its catalog uses", () => {
  // 频道 is "frequency" first in the dictionary, "channel" second: beside an English tool about channels,
  // the Chinese tool's gloss says channel, so an English request about channels matches it there.
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: { type: "object" },
  });
  const index = buildIndex(catalogFromJson({
    servers: [
      { name: "chat", tools: [tool("list_channels", "List the channels of the workspace")] },
      { name: "zh", tools: [tool("history", "获取频道的历史消息")] },
    ],
  }));
  const hit = rankQuery(index, "message history of a channel").hits.find((h) =>
    h.tool.namespaced === "zh__history"
  );
  assert.deepEqual(hit?.matchedTerms, ["history", "channel"]);
  const alone = buildIndex(catalogFromJson({
    servers: [{ name: "zh", tools: [tool("history", "获取频道的历史消息")] }],
  }));
  const other = rankQuery(alone, "message history of a channel").hits[0];
  assert.deepEqual(other?.matchedTerms, ["history"]);
});

Deno.test("a Chinese word is one word of the request, however long its gloss", () => {
  // 热搜: "popular search query", three English words standing for one Chinese word.
  const q = parseQuery("热搜");
  const at = (w: string) => q.words.indexOf(w);
  assert.deepEqual([at("search"), at("query")].map((i) => q.unitOf?.[i]), [at("popular"), at("popular")]);
  // A single character left by segmentation counts only where it matches: 里 "lining" is no miss.
  const del = rankQuery(english, "在 redis 里删除这个键").hits[0]!;
  assert.equal(del.tool.namespaced, "redis__delete");
  assert.equal(del.coverage, 1);
  assert.equal(resolveResponse(english, { query: "在 redis 里删除这个键" }, meta).status, "confident");
  // The word's other senses the catalog uses are hints, weaker than what counts as a match.
  const hinted = parseQuery("频道", (sense) => sense === "channel");
  const channel = hinted.terms.find((t) => t.term === stem("channel"));
  assert.equal(channel?.weight, ZH_SENSE_WEIGHT * ZH_GLOSS_WEIGHT);
  assert.deepEqual(channel?.origins, [hinted.words.indexOf("frequency")]);
  assert.equal(parseQuery("频道").terms.find((t) => t.term === stem("channel")), undefined);
});

Deno.test("an off-topic request in Chinese still matches nothing confidently", () => {
  for (const query of ["点一份大号意大利辣香肠披萨", "澳大利亚的首都是哪里"]) {
    assert.equal(
      resolveResponse(english, { query }, meta).status,
      "no_match",
    );
  }
});
