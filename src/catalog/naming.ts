/**
 * Public tool names: `server__tool`, self-prefix stripping, deterministic
 * collision planning and clamping to what hosts accept.
 *
 * @module
 */

import { drain, sortSteps, STEP } from "./_steps.ts";

/** Separator between server and tool in a public name. */
export const SEPARATOR = "__";

/** What every MCP host accepts as a tool name. */
export const PUBLIC_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Longest public name hosts accept. */
export const MAX_PUBLIC_NAME = 64;

/** The planned public name of one downstream tool. */
export interface PlannedName {
  /** The downstream wire name, used when invoking the server. */
  downstream: string;
  /** The part after `server__` (self-prefix stripped where that does not collide). */
  short: string;
  /** `server__short`, valid for hosts (clamped with a stable hash where needed). */
  namespaced: string;
}

/** FNV-1a 32-bit, as 8 hex chars: short, stable across runs and platforms. */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

function stripSelfPrefix(server: string, tool: string): string | undefined {
  const lower = tool.toLowerCase();
  const prefix = server.toLowerCase();
  for (const sep of ["_", "-"]) {
    if (lower.startsWith(prefix + sep) && tool.length > prefix.length + 1) {
      return tool.slice(prefix.length + 1);
    }
  }
  return undefined;
}

/** Makes `server__short` valid for hosts; over-long or invalid names get a stable hash suffix. */
function clamp(server: string, short: string, original: string): string {
  const sanitized = short.replace(/[^A-Za-z0-9_-]/g, "_");
  const full = `${server}${SEPARATOR}${sanitized}`;
  if (sanitized === short && full.length <= MAX_PUBLIC_NAME) return full;
  const hash = shortHash(`${server}${SEPARATOR}${original}`);
  const room = MAX_PUBLIC_NAME - server.length - SEPARATOR.length - hash.length - 1;
  const head = sanitized.slice(0, Math.max(0, room)).replace(/_+$/, "");
  return `${server}${SEPARATOR}${head ? `${head}_` : ""}${hash}`;
}

/**
 * Plans the public names of one server's tools. Deterministic over the sorted
 * names, so the plan does not depend on the order the server lists its tools.
 * A self-prefixed name (`github_search` on server `github`) is published
 * without the prefix unless that would collide with another tool of the server.
 */
export function planNames(server: string, tools: readonly string[]): PlannedName[] {
  return drain(planNamesSteps(server, tools));
}

/** {@link planNames} stepwise: it yields between pieces, so a 100,000-tool server is planned in slices. */
export function* planNamesSteps(server: string, tools: readonly string[]): Generator<void, PlannedName[]> {
  // The default sort's order (UTF-16 code units); the names are unique, so stability does not matter.
  const sorted = yield* sortSteps([...new Set(tools)], (a, b) => a < b ? -1 : a > b ? 1 : 0);
  let work = 0;
  const taken = new Set(sorted);
  const shorts = new Map<string, string>();
  for (const tool of sorted) {
    if (++work % STEP === 0) yield;
    const stripped = stripSelfPrefix(server, tool);
    const wanted = stripped !== undefined && !taken.has(stripped) ? stripped : tool;
    shorts.set(tool, wanted);
    if (wanted !== tool) taken.add(wanted);
  }
  const used = new Set<string>();
  const plans: PlannedName[] = [];
  for (const tool of sorted) {
    if (++work % STEP === 0) yield;
    const short = shorts.get(tool)!;
    let namespaced = clamp(server, short, tool);
    if (used.has(namespaced)) namespaced = clamp(server, `${short}_${shortHash(tool)}`, `${tool}#`);
    used.add(namespaced);
    plans.push({ downstream: tool, short, namespaced });
  }
  return plans;
}

/** The candidate server/tool pairs a caller's reference may mean, most specific first. */
export interface NameReference {
  server?: string;
  tool: string;
}

/**
 * Splits what a caller sent (`server__tool`, `{server, tool}`, a redundant
 * `server__` prefix) into a server and the tool part. The tool part may still
 * be a stutter (`server_tool`) or a downstream name; the catalog matches those.
 */
export function splitReference(ref: NameReference): NameReference {
  const { server, tool } = ref;
  if (server) {
    const prefix = `${server}${SEPARATOR}`;
    return { server, tool: tool.startsWith(prefix) ? tool.slice(prefix.length) : tool };
  }
  const at = tool.indexOf(SEPARATOR);
  if (at <= 0) return { tool };
  return { server: tool.slice(0, at), tool: tool.slice(at + SEPARATOR.length) };
}
