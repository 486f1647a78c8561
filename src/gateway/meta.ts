/**
 * Answers of the gateway about itself (issue 40: moved out of gateway.ts): its instructions to the host,
 * list_servers, and the code-mode declarations served as a resource.
 *
 * @module
 */
import type { Tool } from "../mcp/sdk.ts";
import type { Hub } from "../hub/hub.ts";
import type { CatalogTool } from "../catalog/mod.ts";
import { CONTRACT_VERSION } from "../hub/meta_tools.ts";
import { TYPES_URI as CODE_TYPES_URI } from "../code/light.ts";
import { clipBytes, serverInstructions } from "./passthrough.ts";
import { capabilitySummary } from "../hub/discovery.ts";
import { DEFAULT_EXPOSE_BUDGET_TOKENS, type Exposure } from "../hub/exposure.ts";

/** What a gateway session advertises, as list_servers reports it (see Gateway). */
export interface AdvertisedView {
  exposure(): Exposure;
  readonly pins: readonly string[];
  metaTools(): Tool[];
  mountedTools(): CatalogTool[];
}

/** Bytes of one server's instructions in list_servers. */
const LIST_INSTRUCTIONS_BYTES = 16 * 1024;

/** The instructions the gateway gives the host at `initialize`: how it works, what is behind it. */
export function gatewayInstructions(hub: Hub): string {
  const config = hub.config;
  const servers = hub.downstreams.map((d) => d.config).filter((s) => s.enabled);
  const n = servers.length;
  const common =
    "A result larger than the response budget comes back as a receipt with a callId: page it with " +
    "get_result. detach: true on call_tool runs long calls in the background (collect with poll_result)." +
    (hub.codeMode
      ? " For several calls whose results you only need combined, run_code runs a short program that " +
        "calls the tools and returns only its answer (describe_tool run_code gives the declarations)."
      : "");
  // An agent with an exact tool allowlist learns only those names, nothing broader about its servers.
  const allow = hub.scope?.tools;
  const own = allow ? "" : serverInstructions(
    servers.map((s) => ({ name: s.name, instructions: hub.instructions(s.name) })),
  );
  if (config.expose === "all") {
    return [
      `mcphub gateway in front of ${n} MCP server${n === 1 ? "" : "s"}.`,
      "Downstream tools are mounted as server__tool; their descriptions start with [server].",
      "list_servers shows what is behind the gateway; call_tool invokes any tool by name.",
      common,
    ].join(" ") + (own ? `\n${own}` : "");
  }
  const summary = capabilitySummary(
    servers.map((s) => {
      if (!allow) return { name: s.name, useWhen: s.useWhen, description: s.description, tags: s.tags };
      const names = allow.filter((t) => t.startsWith(`${s.name}__`));
      return { name: s.name, useWhen: names.length ? [names.join(", ")] : [], tags: [] };
    }).filter((s) => !allow || s.useWhen.length),
  );
  const opening = config.expose === "auto"
    ? `mcphub gateway in auto mode, in front of ${n} MCP server${n === 1 ? "" : "s"}: every tool is ` +
      `mounted as server__tool while their definitions fit expose_budget (${
        config.exposeBudgetTokens ?? DEFAULT_EXPOSE_BUDGET_TOKENS
      } tokens); past it only pinned and most-used tools are mounted and the rest are hidden but available ` +
      "(list_servers says which is in force and why)."
    : `mcphub gateway in lazy mode, in front of ${n} MCP server${
      n === 1 ? "" : "s"
    }: their tools are hidden ` +
      "but available.";
  return [
    opening,
    "At the start of a task and whenever it changes phase, call resolve_tool with what you want to do (or " +
    "search_tools to browse), describe_tool if you need the full input schema, then call_tool " +
    '{tool: "server__tool", arguments} to run it. Pinned tools are mounted directly.',
    common,
    summary ? `Servers:\n${summary}` : "No servers are configured.",
    ...(own ? [own] : []),
  ].join("\n");
}

/** list_servers: every server in scope with its state, and what the gateway advertises of them. */
export async function listServers(hub: Hub, view: AdvertisedView): Promise<Record<string, unknown>> {
  await hub.catalogAsync();
  const servers = hub.servers().map((s) => {
    const out: Record<string, unknown> = {
      name: s.name,
      enabled: s.enabled,
      connected: s.connected,
      state: s.state,
      tools: s.tools,
    };
    if (s.description) out.description = s.description;
    if (s.tags) out.tags = s.tags;
    if (s.use_when) out.use_when = s.use_when;
    if (s.error) out.error = s.error;
    if (s.next_attempt_at) out.next_attempt_at = s.next_attempt_at;
    if (s.failures) out.failures = s.failures;
    if (s.login_command) out.login_command = s.login_command;
    if (s.rejected) out.rejected = s.rejected;
    if (s.held) out.held = s.held;
    if (s.flagged) out.flagged = s.flagged;
    const instructions = hub.scope?.tools ? undefined : hub.instructions(s.name);
    if (instructions) out.instructions = clipBytes(instructions, LIST_INSTRUCTIONS_BYTES);
    return out;
  });
  const catalog = hub.catalog();
  const exposure = view.exposure();
  return {
    contract_version: CONTRACT_VERSION,
    catalog_revision: (await hub.discovery()).revision,
    // The config file's last edit was rejected: what is listed is the config still running.
    ...(hub.configError !== undefined ? { config_error: hub.configError } : {}),
    servers,
    total_tools: catalog.length,
    expose: hub.config.expose,
    ...(hub.config.expose === "auto" ? { exposure: { mode: exposure.mode, reason: exposure.reason } } : {}),
    pinned: view.pins,
    management_tools: view.metaTools().length,
    advertised_downstream_tools: view.mountedTools().length,
  };
}

/** The resource of the code-mode declarations; `?query=…` declares only the tools a search returns. */
export function codeTypesResource() {
  return {
    uri: CODE_TYPES_URI,
    name: "code-mode-types",
    title: "Code mode: TypeScript declarations of the callable tools",
    description: "Declarations of mcp.tools for run_code; add ?query=… for only the tools a search returns.",
    mimeType: "application/typescript",
  };
}

/** The query of a declarations URI ("" for none); undefined when `uri` is not one. */
export function codeTypesQuery(uri: string): string | undefined {
  if (uri === CODE_TYPES_URI) return "";
  if (!uri.startsWith(`${CODE_TYPES_URI}?`)) return undefined;
  return new URLSearchParams(uri.slice(CODE_TYPES_URI.length + 1)).get("query") ?? "";
}
