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
import { clipBytes, instructionsText } from "./initialize.ts";
import type { Exposure } from "../hub/exposure.ts";

/** What a gateway session advertises, as list_servers reports it (see Gateway). */
export interface AdvertisedView {
  exposure(): Exposure;
  readonly pins: readonly string[];
  metaTools(): Tool[];
  mountedTools(): CatalogTool[];
}

/** Bytes of one server's instructions in list_servers. */
const LIST_INSTRUCTIONS_BYTES = 16 * 1024;

/**
 * The instructions the gateway gives the host at `initialize`: how it works, what is behind it. The same
 * function of the same facts as the early answer's (`mcp serve` on stdio, see initialize.ts).
 */
export function gatewayInstructions(hub: Hub): string {
  return instructionsText({
    config: hub.config,
    servers: hub.downstreams.map((d) => d.config),
    scope: hub.scope,
    codeMode: hub.codeMode,
    instructions: (server) => hub.instructions(server),
  });
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
