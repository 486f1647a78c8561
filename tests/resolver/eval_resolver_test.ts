import assert from "node:assert/strict";
import { fixtureServers } from "./_fixture.ts";
import { catalogFromJson, parseQueries } from "../../scripts/eval_resolver.ts";

const script = new URL("../../scripts/eval_resolver.ts", import.meta.url).pathname;

Deno.test("eval_resolver.ts prints one line per query and a summary", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mcphub-eval-" });
  try {
    const servers = fixtureServers().map((s) => ({
      name: s.name,
      description: s.description,
      tags: s.tags,
      use_when: s.useWhen,
      tools: s.tools,
    }));
    await Deno.writeTextFile(`${dir}/catalog.json`, JSON.stringify({ servers }));
    const queries = [
      { id: "q1", query: "read the contents of a text file", gold: ["filesystem__read_text_file"] },
      { id: "q2", query: "what is the current time", gold: ["get_current_time"] },
      { id: "q3", query: "create an issue", gold: ["github_create_issue", "nope"] },
      { id: "q4", query: "order a pepperoni pizza", gold: [] },
    ];
    await Deno.writeTextFile(`${dir}/queries.jsonl`, queries.map((q) => JSON.stringify(q)).join("\n") + "\n");
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        script,
        "--catalog",
        `${dir}/catalog.json`,
        "--queries",
        `${dir}/queries.jsonl`,
        "--top",
        "5",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 5);
    assert.deepEqual(Object.keys(lines[0]), ["id", "status", "results"]);
    assert.equal(lines[0].results[0], "filesystem__read_text_file");
    assert.ok(lines[0].results.length <= 5);
    assert.equal(lines[3].status, "no_match");
    const summary = lines[4];
    assert.equal(summary.summary, true);
    assert.equal(summary.answerable, 3);
    assert.equal(summary.unanswerable, 1);
    assert.equal(summary["hit@1"], 1);
    // q3 has two gold entries, one of which is not in the catalog.
    assert.equal(summary["recall@5"], Math.round(((1 + 1 + 0.5) / 3) * 10000) / 10000);
    assert.equal(summary.no_match_accuracy, 1);
    assert.equal(typeof summary.resolve_p50_ms, "number");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("eval_resolver.ts exits 2 with usage on bad arguments", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, "--top"],
    stderr: "piped",
  })
    .output();
  assert.equal(out.code, 2);
  assert.match(new TextDecoder().decode(out.stderr), /Usage:/);
});

Deno.test("held-out sets: every gold entry names a tool of its catalog", async (t) => {
  const data = new URL("../../scripts/bench/data/", import.meta.url);
  const sets = [
    ["heldout_catalog.json", "heldout_queries.jsonl", "heldout_translated.jsonl"],
    ["heldout2_catalog.json", "heldout2_queries.jsonl", "heldout2_translated.jsonl"],
  ];
  for (const [catalog, ...files] of sets) {
    await t.step(catalog!, async () => {
      const tools = catalogFromJson(JSON.parse(await Deno.readTextFile(new URL(catalog!, data))));
      const names = new Set(tools.flatMap((tool) => [tool.namespaced, tool.tool]));
      for (const file of files) {
        const queries = parseQueries(await Deno.readTextFile(new URL(file, data)));
        assert.ok(queries.length >= 20, file);
        for (const q of queries) for (const g of q.gold) assert.ok(names.has(g), `${file} ${q.id}: ${g}`);
      }
    });
  }
});
