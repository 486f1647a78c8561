import assert from "node:assert/strict";
import { type CommandContext, UsageError } from "../../src/cli/command.ts";
import { createStatsCommand, statsCommand } from "../../src/cli/stats.ts";
import { NOW, sampleStore } from "../intelligence/sample_calls.ts";

interface FakeRun {
  ctx: CommandContext;
  out: string[];
  err: string[];
}

function fakeCtx(
  args: string[],
  options: { db?: string; json?: boolean; env?: Record<string, string>; cwd?: string } = {},
): FakeRun {
  const out: string[] = [];
  const err: string[] = [];
  const env = options.env ?? { HOME: "/nonexistent-home" };
  return {
    out,
    err,
    ctx: {
      args,
      global: { db: options.db, json: options.json ?? false },
      env: { get: (key) => env[key], toObject: () => ({ ...env }) },
      cwd: options.cwd ?? Deno.cwd(),
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      signal: new AbortController().signal,
    },
  };
}

async function withSampleDb(fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_stats_" });
  try {
    const path = `${dir}/mcphub.db`;
    (await sampleStore(path)).close();
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const stats = createStatsCommand({ now: () => NOW });

Deno.test("statsCommand is named stats and has help", () => {
  assert.equal(statsCommand.name, "stats");
  assert.match(statsCommand.help, /--recent N/);
  assert.match(statsCommand.help, /--html FILE {5}Write a self-contained HTML report to FILE/);
});

Deno.test("mcphub stats --tools --recent 2 prints the text report", async () => {
  await withSampleDb(async (path) => {
    const run = fakeCtx(["--tools", "--recent", "2"], { db: path });
    assert.equal(await stats.run(run.ctx), 0);
    assert.deepEqual(run.err, []);
    assert.equal(
      run.out.join(""),
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
`,
    );
  });
});

Deno.test("mcphub stats --since 7d --markdown counts back from now", async () => {
  await withSampleDb(async (path) => {
    const run = fakeCtx(["--since", "7d", "--markdown"], { db: path });
    await stats.run(run.ctx);
    assert.equal(
      run.out.join(""),
      `# mcphub stats

**mcphub stats (last 7d):** 4 calls, 1 error (25.0%), \\~605 tokens to the agent, \\~24,850 kept out of context by the spool (1 result), 510 ms in calls; busiest server \`github\` (3 calls).

| Server | Calls | Errors | Avg ms | Est. tokens | Kept out |
| --- | ---: | ---: | ---: | ---: | ---: |
| \`github\` | 3 | 1 | 167 | 450 | 0 |
| \`fs\` | 1 | 0 | 10 | 155 | 24850 |
`,
    );
  });
});

Deno.test("mcphub stats --json (or global --json) returns totals, servers, tools and recent", async (t) => {
  await withSampleDb(async (path) => {
    await t.step("--json --server github", async () => {
      const run = fakeCtx(["--json", "--server", "github"], { db: path });
      await stats.run(run.ctx);
      const value = JSON.parse(run.out.join(""));
      assert.deepEqual(Object.keys(value), ["totals", "servers", "tools", "recent"]);
      assert.equal(value.totals.calls, 3);
      assert.deepEqual(value.tools, []);
      assert.deepEqual(value.recent, []);
    });
    await t.step("global json with --tools --recent 1 --agent ci", async () => {
      const run = fakeCtx(["--tools", "--recent", "1", "--agent", "ci"], { db: path, json: true });
      await stats.run(run.ctx);
      const value = JSON.parse(run.out.join(""));
      assert.equal(value.totals.calls, 2);
      assert.deepEqual(value.tools.map((x: { namespaced: string }) => x.namespaced), [
        "github__create_issue",
        "slack__post",
      ]);
      assert.equal(value.recent.length, 1);
      assert.equal(value.recent[0].namespaced, "github__create_issue");
    });
  });
});

Deno.test("mcphub stats reads $MCPHUB_DB when --db is absent", async () => {
  await withSampleDb(async (path) => {
    const run = fakeCtx(["--json"], { env: { MCPHUB_DB: path } });
    await stats.run(run.ctx);
    assert.equal(JSON.parse(run.out.join("")).totals.calls, 6);
  });
});

Deno.test("mcphub stats on a missing store prints one sentence and creates nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_stats_" });
  try {
    const path = `${dir}/sub/mcphub.db`;
    const text = fakeCtx([], { db: path });
    await stats.run(text.ctx);
    // Not "calls are recorded in …": nothing can be, where even the directory is missing.
    assert.deepEqual(text.out, [
      `No store at ${path}: its directory does not exist, so nothing was ever recorded there; pass the --db ` +
      "that mcp serve uses, or leave --db out for the default store.\n",
    ]);
    const inDir = fakeCtx([], { db: `${dir}/mcphub.db` });
    await stats.run(inDir.ctx);
    assert.deepEqual(inDir.out, [
      `No calls recorded yet: ${dir}/mcphub.db does not exist yet. mcp serve creates it and records calls ` +
      "there once your MCP host starts it and calls a tool.\n",
    ]);
    const json = fakeCtx(["--json", "--tools", "--recent", "5"], { db: path });
    await stats.run(json.ctx);
    assert.deepEqual(JSON.parse(json.out.join("")), {
      totals: { calls: 0, errors: 0, est_tokens: 0, total_ms: 0, spooled_results: 0, tokens_kept_out: 0 },
      servers: [],
      tools: [],
      recent: [],
    });
    await assert.rejects(Deno.stat(`${dir}/sub`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcphub stats with a window that matches nothing says how to widen it", async () => {
  await withSampleDb(async (path) => {
    const run = fakeCtx(["--since", "10m", "--server", "github"], { db: path });
    await stats.run(run.ctx);
    assert.deepEqual(run.out, [
      `No calls recorded (last 10m, server github) in ${path}; try a longer --since or drop --server.\n`,
    ]);
  });
});

Deno.test("mcphub stats rejects bad flags with a UsageError that lists the accepted forms", async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["bad --since", ["--since", "7days"], /^Invalid --since "7days": use .*30m, 24h, 7d or 2w/],
    ["zero --since", ["--since", "0d"], /^Invalid --since "0d"/],
    ["bad --recent", ["--recent", "ten"], /^Invalid --recent "ten": use a whole number from 1 to 10000/],
    ["zero --recent", ["--recent", "0"], /^Invalid --recent "0"/],
    ["unknown flag", ["--bogus"], /Unknown option '--bogus'.*stats accepts --tools, --recent N, --since D/],
    ["missing value", ["--since"], /--since/],
    ["positional", ["github"], /stats accepts/],
    ["both formats", ["--json", "--markdown"], /^Choose one of --markdown and --json$/],
    ["html and json", ["--html", "r.html", "--json"], /^Choose one of --markdown, --json and --html FILE$/],
    [
      "html and markdown",
      ["--markdown", "--html", "r.html"],
      /^Choose one of --markdown, --json and --html FILE$/,
    ],
    ["empty --html", ["--html", " "], /^--html needs a file name, such as --html stats\.html$/],
  ];
  for (const [name, args, message] of cases) {
    await t.step(name, async () => {
      const run = fakeCtx(args, { db: "/nonexistent/mcphub.db" });
      await assert.rejects(stats.run(run.ctx), (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(error.exitCode, 2);
        assert.equal(error.command, "stats");
        assert.match(error.message, message);
        return true;
      });
      assert.deepEqual(run.out, []);
    });
  }
});

Deno.test("mcphub stats --help prints the help", async () => {
  const run = fakeCtx(["--help"]);
  assert.equal(await stats.run(run.ctx), 0);
  assert.match(run.out.join(""), /^Usage: mcphub stats/);
});

Deno.test("mcphub stats --html FILE writes the report with the filters, resolved against the cwd", async () => {
  await withSampleDb(async (path) => {
    const dir = path.slice(0, path.lastIndexOf("/"));
    const run = fakeCtx(["--html", "report.html", "--since", "7d", "--tools", "--recent", "2"], {
      db: path,
      cwd: dir,
    });
    assert.equal(await stats.run(run.ctx), 0);
    assert.deepEqual(run.out, [`Wrote ${dir}/report.html: 4 calls (last 7d).\n`]);
    const html = await Deno.readTextFile(`${dir}/report.html`);
    assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
    assert.match(html, /<p id="period">Last 7d: 2026-11-23 06:00:00 to 2026-11-30 06:00:00 UTC\.<\/p>/);
    assert.ok(html.includes(`Store: <code>${path}</code>`));
    for (const id of ["chart-calls", "chart-tokens", "chart-duration", "chart-errors"]) {
      assert.match(html, new RegExp(`<svg id="${id}"`));
    }
    assert.match(html, /<p id="chart-detached">No detached calls\.<\/p>/);
    assert.match(html, /<div class="card" id="total-tokens"><div class="value">~25,455<\/div>/);
    assert.equal(html.match(/<table id="table-recent">[^]*?<\/table>/)![0].match(/<tr>/g)!.length, 3);

    const filtered = fakeCtx(["--html", `${dir}/github.html`, "--server", "github", "--agent", "ci"], {
      db: path,
    });
    await stats.run(filtered.ctx);
    assert.deepEqual(filtered.out, [
      `Wrote ${dir}/github.html: 1 call (all time, server github, agent ci).\n`,
    ]);
    assert.match(
      await Deno.readTextFile(`${dir}/github.html`),
      /<title>mcphub stats: all time, server github, agent ci<\/title>/,
    );
  });
});

Deno.test("mcphub stats --html on a missing store writes the no-data page and creates no store", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mcphub_stats_" });
  try {
    const run = fakeCtx(["--html", `${dir}/r.html`], { db: `${dir}/sub/mcphub.db` });
    await stats.run(run.ctx);
    const html = await Deno.readTextFile(`${dir}/r.html`);
    assert.match(html, /<p id="no-data">No store at [^<]*\/sub\/mcphub\.db: its directory does not exist/);
    await assert.rejects(Deno.stat(`${dir}/sub`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcphub stats --html into a missing directory names the file and the fix", async () => {
  await withSampleDb(async (path) => {
    const file = `${path}.missing/r.html`;
    const run = fakeCtx(["--html", file], { db: path });
    await assert.rejects(
      stats.run(run.ctx),
      (error: Error) => {
        assert.match(
          error.message,
          new RegExp(`^Cannot write the report to ${file}: .*; choose a writable --html path$`),
        );
        assert.ok(!(error instanceof UsageError));
        return true;
      },
    );
    assert.deepEqual(run.out, []);
  });
});
