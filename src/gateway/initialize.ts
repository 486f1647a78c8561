/**
 * The gateway's answer to a 2025 host's `initialize`, as pure functions of what is known before the
 * gateway loads: the config, the agent's scope and the servers' cached instructions. The gateway's own
 * session (`Gateway`, on `HostServer`) gives the same answer from the same functions; `mcp serve` on stdio
 * writes it early (see `early.ts`) and loads the gateway after. Imports nothing heavy (no SDK, no hub).
 *
 * @module
 */
import type { AgentConfig, Config, ServerConfig } from "../config/light.ts";
import { agentServers } from "../config/light.ts";
import { capabilitySummary, DEFAULT_EXPOSE_BUDGET_TOKENS } from "../hub/summary.ts";

/** The capabilities the gateway advertises upstream: stable from `initialize` on (servers connect later). */
export const GATEWAY_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
};

/**
 * The v1 SDK's `LATEST_PROTOCOL_VERSION` and `SUPPORTED_PROTOCOL_VERSIONS` (what `HostServer` negotiates
 * with), copied so that answering `initialize` loads no SDK; a test holds them equal to the SDK's.
 */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";
/** See {@linkcode LATEST_PROTOCOL_VERSION}. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/** Bytes of one server's instructions carried in the gateway's own. */
export const INSTRUCTIONS_PER_SERVER_BYTES = 1024;
/** Bytes of all servers' instructions carried in the gateway's own. */
export const INSTRUCTIONS_TOTAL_BYTES = 4096;

/** `text` cut to at most `bytes` UTF-8 bytes on a character boundary, with "…" when cut. */
export function clipBytes(text: string, bytes: number): string {
  const encoded = new TextEncoder().encode(text);
  if (encoded.length <= bytes) return text;
  let end = Math.max(0, bytes - 3);
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--;
  return `${new TextDecoder().decode(encoded.subarray(0, end))}…`;
}

/**
 * The servers' own instructions as a section of the gateway's: each bounded, all bounded, in config
 * order; what is cut or left out is named, with list_servers (which carries them whole) as the next step.
 */
export function serverInstructions(servers: readonly { name: string; instructions?: string }[]): string {
  const lines: string[] = [];
  const left: string[] = [];
  let cut = false;
  let used = 0;
  for (const s of servers) {
    if (!s.instructions?.trim()) continue;
    const clipped = clipBytes(s.instructions.trim(), INSTRUCTIONS_PER_SERVER_BYTES);
    const line = `[${s.name}] ${clipped}`;
    const bytes = new TextEncoder().encode(line).length;
    if (used + bytes > INSTRUCTIONS_TOTAL_BYTES) {
      left.push(s.name);
      continue;
    }
    cut ||= clipped !== s.instructions.trim();
    used += bytes;
    lines.push(line);
  }
  if (!lines.length && !left.length) return "";
  const tail = left.length
    ? `\nInstructions of ${left.join(", ")} left out (size); list_servers shows every server's instructions.`
    : cut
    ? "\nSome instructions were cut (…); list_servers shows them whole."
    : "";
  return `Server instructions:\n${lines.join("\n")}${tail}`;
}

/** What the gateway's instructions are made of (a hub's view of them: see gateway/meta.ts). */
export interface InstructionsSource {
  /** The config in effect (its `expose` and `expose_budget`). */
  config: Config;
  /** The servers in the agent's scope, in config order (disabled ones too). */
  servers: readonly ServerConfig[];
  /** The agent's scope; undefined when unscoped. */
  scope?: AgentConfig;
  /** Code mode is on (at the top level or for the agent). */
  codeMode: boolean;
  /** A server's own instructions, as known now; undefined = none known. */
  instructions(server: string): string | undefined;
}

/** The instructions the gateway gives the host at `initialize`: how it works, what is behind it. */
export function instructionsText(source: InstructionsSource): string {
  const { config } = source;
  const servers = source.servers.filter((s) => s.enabled);
  const n = servers.length;
  const common =
    "A result larger than the response budget comes back as a receipt with a callId: page it with " +
    "get_result. detach: true on call_tool runs long calls in the background (collect with poll_result)." +
    (source.codeMode
      ? " For several calls whose results you only need combined, run_code runs a short program that " +
        "calls the tools and returns only its answer (describe_tool run_code gives the declarations)."
      : "");
  // An agent with an exact tool allowlist learns only those names, nothing broader about its servers.
  const allow = source.scope?.tools;
  const own = allow ? "" : serverInstructions(
    servers.map((s) => ({ name: s.name, instructions: source.instructions(s.name) })),
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

/**
 * The agent's scope and the servers in it, as the hub takes them from `config` (Hub's scope and its
 * servers); undefined when `agent` is not defined there (the hub refuses to start then).
 */
export function scopeOf(
  config: Config,
  agent: string | undefined,
): { scope?: AgentConfig; servers: ServerConfig[] } | undefined {
  if (agent === undefined) return { servers: [...config.servers] };
  const scope = config.agents.find((a) => a.name === agent);
  if (!scope) return undefined;
  // An agent scoped by `tools:` alone reaches only the servers those tools belong to.
  const inScope = scope.servers || scope.tools
    ? new Set(agentServers(scope, config.servers.map((s) => s.name)))
    : undefined;
  return { scope, servers: config.servers.filter((server) => !inScope || inScope.has(server.name)) };
}

/** The checked parts of an `initialize` request that its answer depends on. */
export interface InitializeRequestParts {
  id: string | number;
  protocolVersion: string;
}

/**
 * The line (with its newline) the gateway's session writes in answer to `request`, byte for byte as the
 * SDK's `Protocol` writes it (`{result, jsonrpc, id}`; the result as `HostServer` makes it: the requested
 * protocol version when supported, else the latest).
 */
export function initializeAnswer(
  request: InitializeRequestParts,
  server: { version: string; instructions?: string },
): string {
  const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(request.protocolVersion)
    ? request.protocolVersion
    : LATEST_PROTOCOL_VERSION;
  const result = {
    protocolVersion,
    capabilities: GATEWAY_CAPABILITIES,
    serverInfo: { name: "mcphub", version: server.version },
    ...(server.instructions && { instructions: server.instructions }),
  };
  return `${JSON.stringify({ result, jsonrpc: "2.0", id: request.id })}\n`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isOptional = (v: unknown, check: (v: unknown) => boolean) => v === undefined || check(v);
const isString = (v: unknown) => typeof v === "string";
const isRecordOfObjects = (v: unknown) => isObject(v) && Object.values(v).every(isObject);

/**
 * `value` when it is a well-formed JSON-RPC `initialize` request that the SDK's checks (the envelope's
 * schema, then `InitializeRequestSchema`) certainly accept and `Protocol` answers at once: its id and
 * requested version; undefined for anything else, or anything unusual (the gateway then answers it as
 * always). Conservative on purpose: a shape the SDK might refuse is not answered early.
 */
export function earlyInitializeRequest(value: unknown): InitializeRequestParts | undefined {
  if (!isObject(value) || value.jsonrpc !== "2.0" || value.method !== "initialize") return undefined;
  // The envelope's schema is strict: no other member.
  if (Object.keys(value).some((k) => !["jsonrpc", "id", "method", "params"].includes(k))) return undefined;
  const { id, params } = value;
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined;
  if (!isObject(params) || typeof params.protocolVersion !== "string") return undefined;
  // A task-augmented request is checked against the server's task capability first.
  if ("task" in params) return undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isObject(meta)) return undefined;
    // A request related to a task is answered through the task's queue.
    if ("io.modelcontextprotocol/related-task" in meta) return undefined;
    const token = meta.progressToken;
    if (!(token === undefined || typeof token === "string" || Number.isSafeInteger(token))) return undefined;
  }
  if (!isClientInfo(params.clientInfo) || !isCapabilities(params.capabilities)) return undefined;
  return { id: id as string | number, protocolVersion: params.protocolVersion };
}

function isClientInfo(info: unknown): boolean {
  if (!isObject(info) || !isString(info.name) || !isString(info.version)) return false;
  if (![info.title, info.websiteUrl, info.description].every((v) => isOptional(v, isString))) return false;
  return isOptional(
    info.icons,
    (icons) =>
      Array.isArray(icons) &&
      icons.every((icon) =>
        isObject(icon) && isString(icon.src) && isOptional(icon.mimeType, isString) &&
        isOptional(icon.sizes, (s) => Array.isArray(s) && s.every(isString)) &&
        isOptional(icon.theme, (t) => t === "light" || t === "dark")
      ),
  );
}

/** The client capabilities the early answer takes: the known ones in their plain shapes, others anything. */
function isCapabilities(capabilities: unknown): boolean {
  if (!isObject(capabilities)) return false;
  const { experimental, sampling, elicitation, roots, tasks, extensions } = capabilities;
  return isOptional(experimental, isRecordOfObjects) &&
    isOptional(extensions, isRecordOfObjects) &&
    isOptional(
      sampling,
      (s) => isObject(s) && isOptional(s.context, isObject) && isOptional(s.tools, isObject),
    ) &&
    // Only the plain `{}` and `{form: {}}`, `{url: {}}` shapes (the SDK rewrites some others).
    isOptional(
      elicitation,
      (e) =>
        isObject(e) && Object.entries(e).every(([k, v]) =>
          (k === "form" || k === "url") && isObject(v) &&
          Object.keys(v).length === 0
        ),
    ) &&
    isOptional(roots, (r) => isObject(r) && isOptional(r.listChanged, (b) => typeof b === "boolean")) &&
    // Tasks have a schema of their own: a host that declares them is answered by the gateway.
    tasks === undefined;
}
