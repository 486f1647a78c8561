/**
 * Profiles the gateway process during sequential `echo` calls (the gateway bench's proxy case): spawns
 * `mcphub mcp serve` in front of server-everything with the V8 inspector on 127.0.0.1, samples its CPU
 * over the calls through the DevTools protocol, and prints the self time by function, by file and by the
 * innermost frame of ours on the stack, plus the gateway's CPU time per call (from /proc). `--heap`
 * samples allocations instead (the heap profiler, every 128 bytes): bytes allocated per call, by function
 * and by the innermost frame of ours. Not part of `deno task bench` (a diagnostic).
 *
 * Usage: deno run -A scripts/bench/gateway_profile.ts [--calls N] [--in-flight N] [--record false]
 *   [--out profile.cpuprofile] [--no-profile] [--heap] [--restricted] [--db-apart]
 * (`--restricted`: the permissions the tests give the gateway instead of -A; `--db-apart`: the store in
 * another directory than the config; MCPHUB_STRACE=1 counts the gateway's system calls with strace -c,
 * or MCPHUB_STRACE="strace options" runs strace with those.)
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  connectGateway,
  descendants,
  gatewayFlags,
  q,
  REAL,
  tempDir,
  writeConfig,
} from "../../tests/helpers.ts";
import { drive, echo } from "./gateway_bench.ts";
import { gatewayPid, listServers, reap, waitConnected } from "./_gateway_process.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A minimal DevTools protocol client over the inspector's WebSocket. */
async function inspector(port: number): Promise<{
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): void;
}> {
  let targets: { webSocketDebuggerUrl: string }[] = [];
  for (let i = 0; i < 100 && !targets.length; i++) {
    try {
      targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  if (!targets.length) throw new Error(`No inspector target on 127.0.0.1:${port}`);
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => (ws.onopen = resolve, ws.onerror = reject));
  const waiting = new Map<number, (value: Record<string, unknown>) => void>();
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data as string);
    if (message.id !== undefined) waiting.get(message.id)?.(message.result ?? message);
  };
  let seq = 0;
  return {
    send(method, params = {}) {
      const id = ++seq;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    close: () => ws.close(),
  };
}

function cpuTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU ticks of each thread of `pid`, by thread name. */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${entry.name}/stat`);
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${name} ${entry.name}`, Number(fields[11]) + Number(fields[12]));
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** A frame as `function src/path:line`; `ours` is true for the gateway's own code (under `src/`). */
function frameName(f: ProfileNode["callFrame"]): { name: string; ours: boolean } {
  const ours = f.url.includes("/src/");
  const url = ours ? f.url.replace(/^.*\/src\//, "src/") : f.url;
  return { name: `${f.functionName || "(anonymous)"} ${url}:${f.lineNumber + 1}`, ours };
}

function report(profile: Profile, calls: number): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    total += us;
    if (frame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    const file = frame.url.replace(/^.*\/(node_modules|deps|remote|npm)\//, "$1/").replace(
      /^file:\/\/.*\/perf\//,
      "",
    );
    const fn = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const key = file || frame.functionName;
    byFile.set(key, (byFile.get(key) ?? 0) + us);
  }
  // Self time charged to the innermost frame of ours on the stack (builtins and deps charged to their caller).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byOurs = new Map<string, number>();
  for (const [id, us] of self) {
    if (byId.get(id)!.callFrame.functionName === "(idle)") continue;
    let at: number | undefined = id;
    let key = "(none of ours)";
    while (at !== undefined) {
      const frame = frameName(byId.get(at)!.callFrame);
      if (frame.ours) {
        key = frame.name;
        break;
      }
      at = parent.get(at);
    }
    byOurs.set(key, (byOurs.get(key) ?? 0) + us);
  }
  const busy = total - idle;
  console.log(
    `sampled ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms = ${
      (busy / calls).toFixed(0)
    } µs per call`,
  );
  const top = (map: Map<string, number>, n: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) =>
      `${(100 * us / busy).toFixed(1).padStart(5)}%  ${(us / calls).toFixed(1).padStart(6)} µs/call  ${k}`
    ).join("\n");
  console.log(`--- by file (share of busy time)\n${top(byFile, 25)}`);
  console.log(`--- by function\n${top(byFunction, 45)}`);
  console.log(`--- by the innermost frame of ours\n${top(byOurs, 45)}`);
}

interface HeapNode {
  callFrame: ProfileNode["callFrame"];
  selfSize: number;
  children: HeapNode[];
}

/** Bytes allocated per call, by function (self) and by the stack's first frame of ours (total). */
function heapReport(head: HeapNode, calls: number): void {
  const byFunction = new Map<string, number>();
  const byOurs = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, ours: string | undefined) => {
    const { name, ours: isOurs } = frameName(node.callFrame);
    const mine = isOurs ? name : ours;
    if (node.selfSize) {
      total += node.selfSize;
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
      byOurs.set(mine ?? "(none of ours)", (byOurs.get(mine ?? "(none of ours)") ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, mine);
  };
  walk(head, undefined);
  const top = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([k, b]) =>
      `${(b / calls).toFixed(0).padStart(7)} B/call  ${k}`
    ).join("\n");
  console.log(`allocated ${(total / calls).toFixed(0)} B per call`);
  console.log(`--- by function (self)\n${top(byFunction)}`);
  console.log(`--- by the innermost frame of ours\n${top(byOurs)}`);
}

if (import.meta.main) {
  const { values: flags } = parseArgs({
    args: Deno.args,
    options: {
      calls: { type: "string", default: "4000" },
      "in-flight": { type: "string", default: "1" },
      record: { type: "string", default: "true" },
      out: { type: "string" },
      port: { type: "string", default: "9339" },
      "no-profile": { type: "boolean", default: false },
      /** Sample allocations (the heap profiler) instead of CPU: bytes allocated per call, by function. */
      heap: { type: "boolean", default: false },
      /** The permissions the tests and the gateway bench give it, instead of -A. */
      restricted: { type: "boolean", default: false },
      /** The store in another directory than the config (whose directory the gateway watches). */
      "db-apart": { type: "boolean", default: false },
    },
  });
  const profiling = !flags["no-profile"];
  const calls = Number(flags.calls);
  const inFlight = Number(flags["in-flight"]);
  const port = Number(flags.port);
  const before = new Set(descendants(Deno.pid));
  await using dir = await tempDir("mcphub_gateway_profile_");
  const config = await writeConfig(
    dir.path,
    `servers:\n  everything:\n    command: node\n    args: [${
      q(REAL.everything)
    }, stdio]\nrecord: ${flags.record}\n`,
  );
  const inspect = profiling ? [`--inspect=127.0.0.1:${port}`] : [];
  let db = `${config}.db`;
  if (flags["db-apart"]) {
    await Deno.mkdir(`${dir.path}/store`);
    db = `${dir.path}/store/mcphub.db`;
  }
  const gw = await connectGateway(config, {
    db,
    flags: flags.restricted ? [...inspect, ...await gatewayFlags(config, db)] : ["-A", ...inspect],
  });
  try {
    await waitConnected(() => listServers(gw.client));
    const call = echo(gw.client, "everything__echo");
    await drive(call, 300, inFlight);
    const pid = gatewayPid(gw.transport.pid!);
    const cdp = profiling ? await inspector(port) : undefined;
    if (flags.heap) {
      await cdp?.send("HeapProfiler.enable");
      await cdp?.send("HeapProfiler.startSampling", {
        samplingInterval: 128,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    } else {
      await cdp?.send("Profiler.enable");
      await cdp?.send("Profiler.setSamplingInterval", { interval: 50 });
      await cdp?.send("Profiler.start");
    }
    // MCPHUB_STRACE=1: count the gateway's system calls over the calls (strace -c, printed on stderr).
    const strace = Deno.env.get("MCPHUB_STRACE")
      ? new Deno.Command("strace", {
        args: [
          ...(Deno.env.get("MCPHUB_STRACE") === "1" ? ["-c"] : Deno.env.get("MCPHUB_STRACE")!.split(" ")),
          "-f",
          "-p",
          String(pid),
        ],
        stderr: "inherit",
      }).spawn()
      : undefined;
    if (strace) await new Promise((r) => setTimeout(r, 500));
    const ticks0 = cpuTicks(pid);
    const threads0 = threadTicks(pid);
    const ms = await drive(call, calls, inFlight);
    const ticks = cpuTicks(pid) - ticks0;
    if (strace) {
      strace.kill("SIGINT");
      await strace.status;
    }
    const threads = [...threadTicks(pid)].map(([name, t]) => [name, t - (threads0.get(name) ?? 0)] as const)
      .filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]);
    if (flags.heap && cdp) {
      const sampled = await cdp.send("HeapProfiler.stopSampling");
      cdp.close();
      heapReport((sampled.profile as { head: HeapNode }).head, calls);
    }
    const stopped = flags.heap ? undefined : await cdp?.send("Profiler.stop");
    cdp?.close();
    console.log(
      `${calls} calls, ${inFlight} in flight: ${(calls / (ms / 1000)).toFixed(0)} calls/s; gateway CPU ${
        (ticks * 10_000 / calls).toFixed(0)
      } µs per call (from /proc, 10 ms ticks)`,
    );
    console.log(
      `by thread (µs per call): ${
        threads.map(([name, t]) => `${name} ${(t * 10_000 / calls).toFixed(0)}`).join(", ")
      }`,
    );
    try {
      console.log(`store WAL ${(Deno.statSync(`${db}-wal`).size / 1024).toFixed(0)} KiB`);
    } catch {
      // no WAL (record: false and nothing stored)
    }
    if (stopped) {
      const profile = stopped.profile as Profile;
      if (flags.out) await Deno.writeTextFile(flags.out, JSON.stringify(profile));
      report(profile, calls);
    }
  } finally {
    const pids = descendants(Deno.pid).filter((pid) => !before.has(pid));
    await gw.close();
    await reap(pids);
  }
}
