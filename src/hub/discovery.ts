/**
 * Discovery over the hub's catalog: search_tools, resolve_tool, describe_tool,
 * the lazy-mode pins and the capability summary. One code path for the
 * meta-tools and the human CLI (`mcphub search`, `mcphub describe`).
 *
 * @module
 */
import type { QueryArguments, ResponseContext } from "../resolver/mod.ts";
import type { CatalogTool } from "../catalog/mod.ts";
import type { Hub } from "./hub.ts";
import { type Discovery, IndexGoneError } from "../resolver/index_host.ts";
import { CONTRACT_VERSION } from "./meta_tools.ts";
import { invalidParams } from "../mcp/errors.ts";
import { toolMarkers } from "../trust/injection.ts";
import { MAX_TOOL_NAME_CHARS } from "../trust/limits.ts";

/** The longest tool name echoed back in an error (as tools/call and call_tool echo them). */
const ECHO_NAME_CHARS = 128;

/** A name as echoed in an error: cut to a bound (a hostile or mistaken name may be huge). */
function clipName(name: string): string {
  return name.length <= ECHO_NAME_CHARS ? name : `${name.slice(0, ECHO_NAME_CHARS)}…`;
}

function invalid(message: string): never {
  invalidParams(message);
}

/**
 * Runs one query against the current index. An index replaced (or a worker lost) mid-query is asked
 * again once, of the catalog now; the resolver's argument errors are InvalidParams.
 */
async function query(
  hub: Hub,
  tool: "search_tools" | "resolve_tool",
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const queryArgs: QueryArguments = {
    query: args.query as string,
    max_hits: args.max_hits as number | undefined,
    ...(tool === "search_tools" ? { page_token: args.page_token as string | undefined } : {}),
  };
  const run = async (discovery: Discovery) => {
    const context: ResponseContext = {
      contractVersion: CONTRACT_VERSION,
      catalogRevision: discovery.revision,
    };
    const answer = tool === "search_tools"
      ? await discovery.search(queryArgs, context)
      : await discovery.resolve(queryArgs, context);
    return { ...answer } as Record<string, unknown>;
  };
  try {
    try {
      return await run(await hub.discovery());
    } catch (error) {
      if (!(error instanceof IndexGoneError)) throw error;
      return await run(await hub.discovery());
    }
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) invalid(`${tool}: ${error.message}`);
    throw error;
  }
}

/**
 * Servers whose tools are not searchable yet, stated in the answer so a miss is not taken for wrong
 * words: `servers_connecting`, and for a miss a hint that says to try again.
 */
function withConnecting(hub: Hub, answer: Record<string, unknown>): Record<string, unknown> {
  const connecting = hub.connectingServers();
  const held = hub.held();
  if (held.length) {
    // Held tools are not searchable; they are named so an agent knows why a tool it used is gone.
    answer = {
      ...answer,
      held_tools: held.map((h) => ({
        namespaced: `${h.server}__${h.tool}`,
        status: h.status,
        fields: h.fields,
        since: new Date(h.since).toISOString(),
        hint: `held until a person runs \`mcphub approve ${h.server}__${h.tool}\``,
      })),
    };
  }
  if (connecting.length === 0) return answer;
  const out: Record<string, unknown> = { ...answer, servers_connecting: connecting };
  const missed = answer.status === "no_match" || answer.count === 0;
  if (missed) {
    out.hint = `${connecting.length} server${connecting.length === 1 ? " is" : "s are"} still connecting (${
      connecting.join(", ")
    }): their tools are not searchable yet. Try again in a moment, or call list_servers for their state.`;
  }
  return out;
}

/** `search_tools {query, max_hits?}`. Waits for start-up (bounded by startup_wait). */
export async function searchTools(hub: Hub, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  await hub.settled();
  return withConnecting(hub, await query(hub, "search_tools", args));
}

/** `resolve_tool {query, max_hits?}`. Waits for start-up (bounded by startup_wait). */
export async function resolveTool(hub: Hub, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  await hub.settled();
  return withConnecting(hub, await query(hub, "resolve_tool", args));
}

/** What describe_tool answers for one tool. */
export function describeEntry(entry: CatalogTool, revision: string): Record<string, unknown> {
  const def = entry.definition; // parsed from the packed JSON on each read: once here
  return {
    contract_version: CONTRACT_VERSION,
    catalog_revision: revision,
    server: entry.server,
    tool: entry.short,
    downstream: entry.tool,
    namespaced: entry.namespaced,
    title: entry.title ?? null,
    description: entry.description,
    input_schema: def.inputSchema ?? { type: "object" },
    ...(def.outputSchema ? { output_schema: def.outputSchema } : {}),
    ...(def.annotations ? { annotations: def.annotations } : {}),
  };
}

/**
 * `describe_tool {server?, tool}`: accepts every name form call_tool accepts.
 * Unknown -> InvalidParams naming the closest names; a server that is down -> its state.
 */
export async function describeTool(
  hub: Hub,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { server, tool } = args;
  if (typeof tool !== "string" || tool === "") invalid(`describe_tool: "tool" must be a non-empty string`);
  if (server !== undefined && server !== null && typeof server !== "string") {
    invalid(`describe_tool: "server" must be a string`);
  }
  const ref = { server: (server ?? undefined) as string | undefined, tool };
  const longest = Math.max(tool.length, ref.server?.length ?? 0);
  if (longest > MAX_TOOL_NAME_CHARS) {
    // No lookup, no did-you-mean: no tool has a name this long.
    invalid(
      `describe_tool: Unknown tool "${clipName(ref.server ? `${ref.server}__${tool}` : tool)}": tool names ` +
        `are at most ${MAX_TOOL_NAME_CHARS} characters (this one has ${longest}). Call search_tools to find tools.`,
    );
  }
  let entry = await hub.find(ref);
  if (!entry && !ref.server && !tool.includes("__")) {
    // A bare downstream name: the one tool in scope that has it.
    const bare = await hub.bare(tool);
    if (bare.length > 1) {
      invalid(
        `describe_tool: "${tool.slice(0, 128)}" is a tool of ${bare.length} servers; name one of ${
          bare.map((t) => `"${t.namespaced}"`).join(", ")
        }.`,
      );
    }
    entry = bare[0];
  }
  if (!entry) {
    const down = hub.unavailable(ref);
    const name = ref.server ? `${ref.server}__${tool}` : tool;
    if (down) invalid(`describe_tool: ${down}`);
    const near = hub.closest(name);
    invalid(
      `Unknown tool "${clipName(name)}".${
        near.length ? ` Did you mean ${near.map((n) => `"${n}"`).join(", ")}?` : ""
      }` +
        " Call search_tools to find tools.",
    );
  }
  const described = describeEntry(entry, (await hub.discovery()).revision);
  const markers = toolMarkers(entry.definition);
  // Flagged, not removed: the text stays as the server sent it.
  return markers.length ? { ...described, flags: markers } : described;
}

/** The tools a pin list keeps mounted in lazy mode (`server`, `server__*`, `server__tool`). */
export function pinnedTools(catalog: readonly CatalogTool[], pins: readonly string[]): CatalogTool[] {
  const servers = new Set<string>();
  const names = new Set<string>();
  for (const pin of pins) {
    const at = pin.indexOf("__");
    if (at < 0) servers.add(pin);
    else if (pin.slice(at + 2) === "*") servers.add(pin.slice(0, at));
    else names.add(pin);
  }
  return catalog.filter((t) =>
    servers.has(t.server) || names.has(t.namespaced) || names.has(`${t.server}__${t.tool}`)
  );
}

export { capabilitySummary, SUMMARY_ITEM_BYTES, SUMMARY_TOTAL_BYTES, type SummaryServer } from "./summary.ts";
