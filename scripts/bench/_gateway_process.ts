/**
 * What the end-to-end benchmarks share: finding the gateway process, reading its memory and open file
 * descriptors from /proc, waiting for its servers, and killing what is left. Imported only from this
 * folder.
 *
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
import { alive, descendants, structured } from "../../tests/helpers.ts";

/** One mebibyte, the unit the benchmarks print. */
export const MB = 1024 * 1024;

/** A server as `list_servers` reports it. */
export interface ServerState {
  name: string;
  state: string;
  failures?: number;
  error?: string;
}

/** Memory and descriptors of one process, from /proc. Sizes in bytes. */
export interface ProcessSample {
  /** VmRSS: resident now. */
  rssBytes: number;
  /** VmHWM: the peak resident size since the process started. */
  hwmBytes: number;
  /** Entries of /proc/PID/fd. */
  fds: number;
  /** Live (non-zombie) descendants. */
  children: number;
}

function statusKb(status: string, key: string): number {
  const match = status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"));
  if (!match) throw new Error(`/proc status has no ${key} line`);
  return Number(match[1]);
}

/** Reads {@linkcode ProcessSample} of `pid` (Linux only). */
export function sampleProcess(pid: number): ProcessSample {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  let fds = 0;
  for (const _ of Deno.readDirSync(`/proc/${pid}/fd`)) fds++;
  return {
    rssBytes: statusKb(status, "VmRSS") * 1024,
    hwmBytes: statusKb(status, "VmHWM") * 1024,
    fds,
    children: descendants(pid).filter(alive).length,
  };
}

function commandLine(pid: number): string[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * The pid of the process that runs `main.ts … mcp serve`: `spawned` itself when it is `deno run` (the
 * usual case: Deno runs the module in-process), else the first descendant that does.
 *
 * @throws {Error} when neither does
 */
export function gatewayPid(spawned: number): number {
  for (const pid of [spawned, ...descendants(spawned)]) {
    const args = commandLine(pid);
    if (args.some((a) => a.endsWith("main.ts")) && args.includes("serve")) return pid;
  }
  throw new Error(`No process running main.ts mcp serve at or under pid ${spawned}`);
}

/** `list_servers` through an SDK client. */
export async function listServers(client: Client): Promise<ServerState[]> {
  const result = await client.callTool({ name: "list_servers", arguments: {} });
  return structured<{ servers: ServerState[] }>(result).servers;
}

/**
 * Waits until every server `list` reports is `connected` (through `connecting` and `backoff`).
 *
 * @throws {Error} when one is `failed` or `timeoutMs` passes first
 */
export async function waitConnected(
  list: () => Promise<ServerState[]>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let servers: ServerState[] = [];
  while (Date.now() < deadline) {
    servers = await list();
    const failed = servers.filter((s) => s.state === "failed" || s.state === "closed");
    if (failed.length) throw new Error(`Gateway server not usable: ${JSON.stringify(failed)}`);
    if (servers.every((s) => s.state === "connected")) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  const waiting = servers.filter((s) => s.state !== "connected").map((s) => `${s.name} (${s.state})`);
  throw new Error(`Gateway servers not connected after ${timeoutMs} ms: ${waiting.join(", ")}`);
}

/** Kills what is left of `pids` (ours) after a grace period; returns how many were left. */
export async function reap(pids: number[], graceMs = 5_000): Promise<number> {
  const deadline = Date.now() + graceMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  const left = pids.filter(alive);
  for (const pid of left) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
  return left.length;
}

/** `bytes` in MB with one decimal. */
export function mb(bytes: number): string {
  return `${(bytes / MB).toFixed(1)} MB`;
}

/** A signed difference in MB with one decimal. */
export function mbDelta(bytes: number): string {
  return `${bytes >= 0 ? "+" : "-"}${(Math.abs(bytes) / MB).toFixed(1)} MB`;
}
