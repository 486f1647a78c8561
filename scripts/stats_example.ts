/**
 * Makes the example report in docs/: runs the gateway against examples/mcphub.yaml,
 * makes real calls through it (mounted, `call_tool`, detached, some failing), then
 * spreads those real records over a week of working days through the Recorder, and
 * renders `mcphub stats --html` of the week and screenshots it in light and dark mode.
 *
 *   deno run -A scripts/stats_example.ts [--out docs]
 *
 * The week is seeded, so a rerun with the same real calls draws the same calendar.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { connectGateway, ROOT } from "../tests/helpers.ts";
import { chromium, runChromium } from "../tests/intelligence/chromium.ts";
import { type CallRecord, type CallVia, intelligenceMigrations, Recorder } from "../src/intelligence/mod.ts";
import { openStore } from "../src/store/mod.ts";

const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string", default: "docs" } } });
const OUT = `${ROOT}${values.out}`;
const DAY = 86_400_000;

type Call = { tool: string; args?: Record<string, unknown>; detach?: boolean; times?: number };

/** What an agent working in this repository does with the three example servers. */
const SESSION: Call[] = [
  { tool: "filesystem__list_directory", args: { path: "src" }, times: 3 },
  { tool: "filesystem__list_directory", args: { path: "src/hub" }, times: 2 },
  { tool: "filesystem__read_text_file", args: { path: "README.md" }, times: 3 },
  { tool: "filesystem__read_text_file", args: { path: "src/hub/hub.ts" }, times: 2 },
  { tool: "filesystem__read_text_file", args: { path: "src/config/mod.ts" } },
  { tool: "filesystem__read_text_file", args: { path: "tests/servers/package-lock.json" } },
  { tool: "filesystem__read_text_file", args: { path: "src/hub/routes.ts" } },
  { tool: "filesystem__search_files", args: { path: "src", pattern: "*.ts" }, times: 2 },
  { tool: "filesystem__directory_tree", args: { path: "src" } },
  { tool: "filesystem__directory_tree", args: { path: "tests/cli" } },
  { tool: "filesystem__get_file_info", args: { path: "deno.json" }, times: 2 },
  {
    tool: "filesystem__read_multiple_files",
    args: {
      paths: ["src/hub/hub.ts", "src/gateway/gateway.ts", "src/downstream/downstream.ts", "src/spool/mod.ts"],
    },
  },
  {
    tool: "memory__create_entities",
    args: {
      entities: [{ name: "mcphub", entityType: "project", observations: ["a Deno MCP gateway"] }],
    },
  },
  {
    tool: "memory__add_observations",
    args: { observations: [{ entityName: "mcphub", contents: ["stats --html writes a report"] }] },
    times: 3,
  },
  {
    tool: "memory__add_observations",
    args: { observations: [{ entityName: "no-such-entity", contents: ["x"] }] },
  },
  { tool: "memory__search_nodes", args: { query: "mcphub" }, times: 4 },
  { tool: "memory__open_nodes", args: { names: ["mcphub"] }, times: 2 },
  { tool: "memory__read_graph", args: {} },
  { tool: "everything__echo", args: { message: "hello from the stats example" }, times: 4 },
  { tool: "everything__get-sum", args: { a: 1234, b: 5678 }, times: 6 },
  { tool: "everything__get-tiny-image", args: {} },
  { tool: "everything__trigger-long-running-operation", args: { duration: 2, steps: 4 } },
  {
    tool: "everything__trigger-long-running-operation",
    args: { duration: 3, steps: 3 },
    detach: true,
    times: 2,
  },
  { tool: "everything__get-sum", args: { a: "one", b: 2 } },
];

async function realCalls(dir: string): Promise<string> {
  const db = `${dir}/real.db`;
  const config = `${ROOT}examples/mcphub.yaml`;
  const gateway = await connectGateway(config, { db });
  try {
    const { tools } = await gateway.client.listTools();
    const names = new Set(tools.map((t) => t.name));
    for (const call of SESSION) {
      for (let i = 0; i < (call.times ?? 1); i++) {
        if (call.detach) {
          const accepted = await gateway.client.callTool({
            name: "call_tool",
            arguments: { tool: call.tool, arguments: call.args, detach: true },
          });
          const { callId } = accepted.structuredContent as { callId: string };
          for (;;) {
            const polled = await gateway.client.callTool({ name: "poll_result", arguments: { callId } });
            const status = (polled.structuredContent as { status?: string } | undefined)?.status;
            if (status !== "pending") break;
            await new Promise((r) => setTimeout(r, 250));
          }
        } else if (names.has(call.tool) && i % 2 === 0) {
          await gateway.client.callTool({ name: call.tool, arguments: call.args });
        } else {
          // The other way agents call: through the call_tool meta-tool.
          await gateway.client.callTool({
            name: "call_tool",
            arguments: { tool: call.tool, arguments: call.args },
          });
        }
      }
    }
  } finally {
    await gateway.close();
  }
  return db;
}

interface Template {
  server: string;
  tool: string;
  namespaced: string;
  durationMs: number;
  ok: boolean;
  argsBytes: number;
  resultBytes: number;
  returnedBytes: number;
  via: CallVia;
  spooled: boolean;
}

function readTemplates(path: string): Template[] {
  const db = openStore(path, { migrations: intelligenceMigrations });
  try {
    return db.prepare(
      `SELECT server, tool, namespaced, duration_ms, ok, args_bytes, result_bytes, returned_bytes, via, spooled
       FROM calls ORDER BY id`,
    ).all().map((r) => ({
      server: String(r.server),
      tool: String(r.tool),
      namespaced: String(r.namespaced),
      durationMs: Number(r.duration_ms),
      ok: Number(r.ok) === 1,
      argsBytes: Number(r.args_bytes),
      resultBytes: Number(r.result_bytes),
      returnedBytes: Number(r.returned_bytes),
      via: String(r.via) as CallVia,
      spooled: Number(r.spooled) === 1,
    }));
  } finally {
    db.close();
  }
}

/** mulberry32: a small seeded generator, so the example week is reproducible. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Replays the real records as a week of sessions: more on weekdays, none at night. */
async function writeWeek(path: string, templates: Template[], now: number): Promise<number> {
  const rnd = random(20261130);
  const db = openStore(path, { migrations: intelligenceMigrations });
  const recorder = new Recorder(db, { batchMs: 0 });
  let count = 0;
  try {
    const today = Math.floor(now / DAY) * DAY;
    for (let d = 7; d >= 0; d--) {
      const day = today - d * DAY;
      const weekday = new Date(day).getUTCDay();
      const sessions = weekday === 0 || weekday === 6 ? 1 + Math.floor(rnd() * 2) : 4 + Math.floor(rnd() * 5);
      for (let s = 0; s < sessions; s++) {
        let ts = day + (8 + rnd() * 10) * 3_600_000;
        const agent = rnd() < 0.75 ? "claude" : "ci";
        for (const t of templates) {
          // Each session makes most of the real calls, some twice; timings vary like real ones do.
          // Failing calls are the exception: an agent fixes its arguments after one.
          const skip = t.ok ? 0.15 : 0.75;
          const repeats = rnd() < skip ? 0 : rnd() < 0.25 ? 2 : 1;
          for (let r = 0; r < repeats; r++) {
            ts += 2000 + rnd() * 40_000;
            if (ts > now || ts < now - 7 * DAY) continue;
            const jitter = Math.exp((rnd() - 0.4) * 1.2);
            const record: CallRecord = {
              ...t,
              ts: Math.round(ts),
              durationMs: Math.max(1, Math.round(t.durationMs * jitter)),
              agent,
            };
            recorder.record(record);
            count++;
          }
        }
      }
    }
  } finally {
    await recorder.close();
    db.close();
  }
  return count;
}

async function pageHeight(bin: string, html: string, dir: string): Promise<number> {
  const probe = html.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    .replace(
      "</body>",
      `<script>addEventListener("load", () => { const p = document.createElement("pre"); p.id = "h"; ` +
        `p.textContent = document.documentElement.scrollHeight; document.body.append(p); });</script></body>`,
    );
  await Deno.writeTextFile(`${dir}/probe.html`, probe);
  const { stdout } = await runChromium(bin, `file://${dir}/probe.html`, ["--dump-dom"], {
    size: [1100, 1000],
  });
  const height = Number(/<pre id="h">(\d+)<\/pre>/.exec(stdout)?.[1]);
  if (!(height > 0)) throw new Error("Cannot measure the report page");
  return height - 16; // the probe's own line
}

const dir = await Deno.makeTempDir({ prefix: "mcphub-stats-example-" });
try {
  console.error("stats_example: making real calls through the gateway (examples/mcphub.yaml)…");
  const templates = readTemplates(await realCalls(dir));
  console.error(`stats_example: ${templates.length} real calls recorded`);
  const store = `${dir}/mcphub.db`;
  const now = Date.now();
  const count = await writeWeek(store, templates, now);
  console.error(`stats_example: ${count} calls written over 7 days`);
  // The HTML stays out of docs/: deno fmt would reflow it.
  const html = `${dir}/stats-report.html`;
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, "--db", store, "stats", "--since", "7d", "--html", html],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) throw new Error(`mcphub stats --html exited with ${code}`);
  const browser = await chromium();
  if ("skip" in browser) throw new Error(`No screenshot: ${browser.skip}`);
  const height = await pageHeight(browser.bin, await Deno.readTextFile(html), dir);
  for (const scheme of ["light", "dark"] as const) {
    const png = `${OUT}/stats-report${scheme === "dark" ? "-dark" : ""}.png`;
    await runChromium(browser.bin, `file://${html}`, [`--screenshot=${png}`], {
      scheme,
      size: [1100, height],
    });
    console.error(`stats_example: wrote ${png}`);
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
