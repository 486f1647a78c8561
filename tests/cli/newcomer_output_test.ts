/**
 * The small things a newcomer trips on (issue 46, point 7): plurals and one totals line in stats, whole tool
 * names in the HTML charts, no percent-encoded "…" in `list`, and `deno task start`'s errors in the CLI's
 * `error:` style.
 */
import assert from "node:assert/strict";
import { formatStatsMarkdown, formatStatsText, type StatsReport } from "../../src/intelligence/mod.ts";
import { horizontalBars } from "../../src/intelligence/svg.ts";
import { redactUrl } from "../../src/hub/mod.ts";
import { DENO, ROOT, runMcphub, tempDir, writeConfig } from "../helpers.ts";

const REPORT: StatsReport = {
  totals: { calls: 1, errors: 1, est_tokens: 3691, total_ms: 3691, spooled_results: 0, tokens_kept_out: 0 },
  servers: [{ server: "gh", calls: 1, errors: 1, avg_ms: 3691, est_tokens: 3691, tokens_kept_out: 0 }],
  tools: [],
  recent: [],
} as unknown as StatsReport;

Deno.test("stats: '1 call, 1 error', thousands in one format, and markdown says the totals once", () => {
  const text = formatStatsText(REPORT, {});
  assert.match(text, /^Totals \(all time\): 1 call, 1 error, ~3,691 tokens to the agent, 3,691 ms total$/m);
  assert.doesNotMatch(text, /1 errors|1 calls|3691ms/);
  const md = formatStatsMarkdown(REPORT, {});
  assert.doesNotMatch(md, /3691ms|Totals \(/);
  assert.equal(md.match(/3,691 ms/g)?.length, 1, md);
});

Deno.test("HTML bar charts keep a whole tool name when the bars have room, and cut only a very long one", () => {
  const name = "everything__trigger-long-running-operation"; // 42 characters
  const chart = (label: string) =>
    horizontalBars({
      id: "chart-errors",
      label: "Error rate per tool",
      series: [{ name: "error rate", cls: "fail" }],
      max: 1,
      rows: [{ label, values: [0.5], note: "50.0% (1 of 2)" }],
    });
  const svg = chart(name);
  assert.match(svg, new RegExp(`>${name}</text>`));
  assert.doesNotMatch(svg, /…/);
  const long = "x".repeat(120);
  const cut = chart(long);
  assert.match(cut, /<title>x{120}<\/title>x+…<\/text>/);
  // The label column still leaves the bars room in the 760-wide chart.
  const labelEnd = Number(/<text x="([\d.]+)"[^>]*class="label"/.exec(cut)![1]);
  assert.ok(labelEnd <= 760 - 200, String(labelEnd));
});

Deno.test("list shows a redacted query as ?… (not ?%E2%80%A6)", async () => {
  assert.equal(redactUrl("https://user:pw@mcp.example/mcp?key=abc#frag"), "https://mcp.example/mcp?…");
  assert.equal(redactUrl("https://mcp.example/mcp"), "https://mcp.example/mcp");
  await using dir = await tempDir();
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const config = await writeConfig(
    dir.path,
    `servers:\n  web:\n    url: http://127.0.0.1:${port}/mcp?token=abc\n`,
  );
  const r = await runMcphub(["--config", config, "--db", `${dir.path}/db.sqlite`, "list"]);
  assert.match(r.stdout, new RegExp(`http://127\\.0\\.0\\.1:${port}/mcp\\?…`), r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout + r.stderr, /%E2%80%A6|token=abc/);
});

Deno.test("deno task start with a broken config: one 'error:' line, no uncaught stack", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, "servers:\n  x: {}\n");
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}scripts/start.ts`, "--config", config, "--db", `${dir.path}/db.sqlite`],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1);
  assert.equal(stderr, `error: ${config}:2:3: servers.x: set exactly one of "command" or "url"\n`);
});
