import assert from "node:assert/strict";
import {
  formatStatsJson,
  formatStatsMarkdown,
  formatStatsText,
  formatWhen,
  noDataSentence,
  queryStats,
  type StatsReport,
  statsSummaryLine,
} from "../../src/intelligence/mod.ts";
import { sqliteReader } from "../../src/store/mod.ts";
import { NOW, sampleStore } from "./sample_calls.ts";

const WEEK = 7 * 86_400_000;

async function sampleReport(q: Parameters<typeof queryStats>[1] = {}): Promise<StatsReport> {
  const db = await sampleStore();
  try {
    return await queryStats(sqliteReader(db), q);
  } finally {
    db.close();
  }
}

const EMPTY: StatsReport = {
  totals: { calls: 0, errors: 0, est_tokens: 0, total_ms: 0, spooled_results: 0, tokens_kept_out: 0 },
  servers: [],
  tools: [],
  recent: [],
};

Deno.test("formatStatsText() prints totals, the spool line and aligned tables", async () => {
  const report = await sampleReport({ recent: 3 });
  assert.equal(
    formatStatsText(report, { tools: true }),
    `Totals (all time): 6 calls, 2 errors, ~685 tokens to the agent, 1,515 ms total
Spooled results: 1, ~24850 tokens kept out of context

SERVER  CALLS  ERRORS  AVG_MS  EST_TOKENS  KEPT_OUT
github      3       1     167         450         0
fs          2       0       8         210     24850
slack       1       1    1000          25         0

TOOL                  CALLS  ERRORS  AVG_MS  EST_TOKENS  KEPT_OUT
fs__read_file             2       0       8         210     24850
github__search_code       2       0     100         375         0
github__create_issue      1       1     300          75         0
slack__post               1       1    1000          25         0

WHEN                 TOOL                 OK    MS  TOKENS
2026-11-30 05:30:00  fs__read_file        yes   10     155
2026-11-30 05:00:00  github__search_code  yes  120     110
2026-11-30 04:00:00  github__search_code  yes   80     265
`,
  );
});

Deno.test("formatStatsText() names the --since window and filters, and leaves out an empty spool line", async () => {
  const week = await sampleReport({ since: NOW - WEEK });
  assert.equal(
    formatStatsText(week, { since: "7d" }),
    `Totals (last 7d): 4 calls, 1 error, ~605 tokens to the agent, 510 ms total
Spooled results: 1, ~24850 tokens kept out of context

SERVER  CALLS  ERRORS  AVG_MS  EST_TOKENS  KEPT_OUT
github      3       1     167         450         0
fs          1       0      10         155     24850
`,
  );
  const ci = await sampleReport({ agent: "ci", server: "slack" });
  assert.equal(
    formatStatsText(ci, { agent: "ci", server: "slack" }),
    `Totals (all time, server slack, agent ci): 1 call, 1 error, ~25 tokens to the agent, 1,000 ms total

SERVER  CALLS  ERRORS  AVG_MS  EST_TOKENS  KEPT_OUT
slack       1       1    1000          25         0
`,
  );
});

Deno.test("formatStatsMarkdown() prints a heading, the one-line summary and right-aligned GFM tables", async () => {
  const report = await sampleReport({ recent: 2 });
  assert.equal(
    formatStatsMarkdown(report, { tools: true }),
    `# mcphub stats

**mcphub stats (all time):** 6 calls, 2 errors (33.3%), \\~685 tokens to the agent, \\~24,850 kept out of context by the spool (1 result), 1,515 ms in calls; busiest server \`github\` (3 calls).

| Server | Calls | Errors | Avg ms | Est. tokens | Kept out |
| --- | ---: | ---: | ---: | ---: | ---: |
| \`github\` | 3 | 1 | 167 | 450 | 0 |
| \`fs\` | 2 | 0 | 8 | 210 | 24850 |
| \`slack\` | 1 | 1 | 1000 | 25 | 0 |

## Tools

| Tool | Calls | Errors | Avg ms | Est. tokens | Kept out |
| --- | ---: | ---: | ---: | ---: | ---: |
| \`fs__read_file\` | 2 | 0 | 8 | 210 | 24850 |
| \`github__search_code\` | 2 | 0 | 100 | 375 | 0 |
| \`github__create_issue\` | 1 | 1 | 300 | 75 | 0 |
| \`slack__post\` | 1 | 1 | 1000 | 25 | 0 |

## Recent calls

| When (UTC) | Tool | OK | ms | Tokens |
| --- | --- | --- | ---: | ---: |
| 2026-11-30 05:30:00 | \`fs__read_file\` | yes | 10 | 155 |
| 2026-11-30 05:00:00 | \`github__search_code\` | yes | 120 | 110 |
`,
  );
});

Deno.test("formatStatsMarkdown() escapes table pipes and emphasis in names", () => {
  const report: StatsReport = {
    ...EMPTY,
    totals: { ...EMPTY.totals, calls: 1 },
    servers: [{ server: "a|b", calls: 1, errors: 0, avg_ms: 1, est_tokens: 2, tokens_kept_out: 0 }],
  };
  const text = formatStatsMarkdown(report, { server: "a|b*" });
  assert.match(text, /^\*\*mcphub stats \(all time, server a\|b\\\*\):\*\* 1 call, 0 errors \(0\.0%\), /m);
  assert.match(text, /^\| `a\\\|b` \| 1 \| 0 \| 1 \| 2 \| 0 \|$/m);
});

Deno.test("statsSummaryLine() is one line that stands alone: window, totals, spool, busiest server", async () => {
  const week = await sampleReport({ since: NOW - WEEK });
  assert.equal(
    statsSummaryLine(week, { since: "7d" }),
    "**mcphub stats (last 7d):** 4 calls, 1 error (25.0%), \\~605 tokens to the agent, \\~24,850 kept out of context " +
      "by the spool (1 result), 510 ms in calls; busiest server `github` (3 calls).",
  );
  const slack = await sampleReport({ server: "slack" });
  assert.equal(
    statsSummaryLine(slack, { server: "slack" }),
    "**mcphub stats (all time, server slack):** 1 call, 1 error (100.0%), \\~25 tokens to the agent, 1,000 ms in calls.",
  );
  assert.equal(
    statsSummaryLine(EMPTY, { since: "1d" }),
    "**mcphub stats (last 1d):** No calls recorded (last 1d); try a longer --since.",
  );
});

Deno.test("formatStatsJson() always has totals, servers, tools and recent", async () => {
  const report = await sampleReport({ recent: 1 });
  const plain = JSON.parse(formatStatsJson(report));
  assert.deepEqual(Object.keys(plain), ["totals", "servers", "tools", "recent"]);
  assert.deepEqual(plain.tools, []);
  assert.equal(plain.recent.length, 1);
  assert.equal(JSON.parse(formatStatsJson(report, { tools: true })).tools.length, 4);
  assert.deepEqual(JSON.parse(formatStatsJson(EMPTY, { tools: true })), EMPTY);
});

Deno.test("An empty report is one sentence, not an empty table", async (t) => {
  await t.step("text, all time", () => {
    assert.equal(
      formatStatsText(EMPTY, { dbPath: "/data/mcphub.db" }),
      "No calls recorded yet (all time). Run `mcphub mcp serve` from your MCP host and call a tool; " +
        "calls are recorded in /data/mcphub.db.\n",
    );
  });
  await t.step("text, filtered", () => {
    assert.equal(
      formatStatsText(EMPTY, { since: "24h", agent: "ci", dbPath: "/data/mcphub.db" }),
      "No calls recorded (last 24h, agent ci) in /data/mcphub.db; try a longer --since or drop --agent.\n",
    );
    assert.equal(
      noDataSentence({ server: "s", agent: "a" }),
      "No calls recorded (all time, server s, agent a); drop --server or --agent.",
    );
  });
  await t.step("markdown", () => {
    assert.equal(
      formatStatsMarkdown(EMPTY, { dbPath: "/data/mcphub.db" }),
      "# mcphub stats\n\nNo calls recorded yet (all time). Run `mcphub mcp serve` from your MCP host and call " +
        "a tool; calls are recorded in /data/mcphub.db.\n",
    );
  });
});

Deno.test("formatWhen() prints UTC to the second", () => {
  assert.equal(formatWhen(Date.UTC(2026, 10, 30, 5, 46, 57, 999)), "2026-11-30 05:46:57");
});
