/**
 * In-process: the longest stretch the event loop was held while a Hub starts, lists and screens one
 * hostile server (a 1,000,000-deep schema, a 50 MB description, 50 MB values outside the tools), measured by
 * a 0 ms timer chain (`longestStepMs`; `longestThen1sMs` includes the second after it).
 *
 * ```sh
 * flock /tmp/bench.lock deno run -A scripts/bench/list_stall.ts [deep-1000000,capitals-50mb,meta-50mb]
 * ```
 *
 * A case name ending in `-http` (`-http-sse`) serves the same over Streamable HTTP with JSON (SSE) answers:
 *
 * ```sh
 * flock /tmp/bench.lock deno run -A scripts/bench/list_stall.ts deep-1000000-http,capitals-50mb-http-sse
 * ```
 *
 * @module
 */
// The process-wide JSON guard, first, as main.ts installs it for `mcp serve` (the SDK's parses go through it).
import "../../src/json/install.ts";
import { parseConfig } from "../../src/config/mod.ts";
import { Hub } from "../../src/hub/mod.ts";
import { DENO, HOSTILE, startHostileHttp } from "../../tests/helpers.ts";

const cases: Record<string, string[]> = {
  "deep-1000000": ["--mode", "deep", "--depth", "1000000"],
  "capitals-50mb": ["--mode", "capitals", "--bytes", "50000000"],
  // Huge values outside the tools: in _meta, in the result, in the envelope (issue #12's last gap).
  "meta-50mb": ["--mode", "meta", "--bytes", "50000000", "--depth", "100000"],
};
const only = Deno.args[0]?.split(",");
const names = only ?? Object.keys(cases);
for (const name of names) {
  const http = name.match(/^(.*?)-http(-sse)?$/);
  const args = cases[http ? http[1]! : name];
  if (!args) throw new Error(`no case "${name}"`);
  await using served = http ? await startHostileHttp(args) : undefined;
  const yaml = served
    ? `servers:\n  bad:\n    url: ${
      JSON.stringify(`http://127.0.0.1:${served.port}${http![2] ? "/mcp-sse" : "/mcp"}`)
    }\n`
    : `servers:\n  bad:\n    command: ${DENO}\n    args: ${
      JSON.stringify(["run", "-A", HOSTILE, ...args])
    }\n`;
  const hub = new Hub({
    config: parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" }),
    env: Deno.env.toObject(),
    version: "bench",
    log: () => {},
  });
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const t0 = performance.now();
  await hub.start();
  const took = performance.now() - t0;
  const duringStart = longest;
  // And for 1 s after (the garbage of what was parsed is collected then).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  running = false;
  const bad = hub.servers().find((s) => s.name === "bad")!;
  console.log(
    JSON.stringify({
      case: name,
      longestStepMs: +duringStart.toFixed(1),
      longestThen1sMs: +longest.toFixed(1),
      startMs: Math.round(took),
      rejected: bad.rejected,
    }),
  );
  await hub.close();
}
