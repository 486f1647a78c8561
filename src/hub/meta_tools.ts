/**
 * The gateway's own tools: names, aliases and input schemas.
 *
 * @module
 */
import type { Tool } from "../mcp/sdk.ts";

/** Version of the meta-tool result shapes. */
export const CONTRACT_VERSION = "1";

/** The meta-tool names, in the order they are advertised (run_code only with `code_mode: true`). */
export const META_TOOL_NAMES = [
  "list_servers",
  "search_tools",
  "describe_tool",
  "resolve_tool",
  "call_tool",
  "run_code",
  "get_result",
  "poll_result",
  "stats",
] as const;

/** One meta-tool name. */
export type MetaToolName = typeof META_TOOL_NAMES[number];

/** The meta-tool a `tools/call` name means, accepting `mcphub_X`, `mcphub__X` and `mcphub__mcphub_X`. */
export function metaToolName(name: string): MetaToolName | undefined {
  let n = name;
  if (n.startsWith("mcphub__")) n = n.slice("mcphub__".length);
  if (n.startsWith("mcphub_")) n = n.slice("mcphub_".length);
  return (META_TOOL_NAMES as readonly string[]).includes(n) ? n as MetaToolName : undefined;
}

const QUERY = { type: "string", description: "What you want to do, in plain words (at most 2,048 bytes)." };

/** Definitions as advertised in `tools/list`. */
export const META_TOOLS: Record<MetaToolName, Tool> = {
  list_servers: {
    name: "list_servers",
    description:
      "List the downstream MCP servers behind this gateway with their state (connected, connecting, failed) and tool counts. Call it to see what is available.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
  },
  search_tools: {
    name: "search_tools",
    description:
      "Ranked natural-language search over every downstream tool (names, titles, descriptions, input fields, server descriptions, tags, use_when hints). Returns server__tool names to use with call_tool, best first, each with a one-line summary and its required arguments; `shape` says whether that is every matching tool or one page (pass next_page_token back as page_token for the next). An empty query lists the catalog by name.",
    inputSchema: {
      type: "object",
      properties: {
        query: QUERY,
        max_hits: { type: "integer", minimum: 1, maximum: 100, default: 20 },
        page_token: {
          type: "string",
          description: "The next_page_token of the previous answer to the same query, to read the next page.",
        },
      },
      required: ["query"],
    },
    annotations: { readOnlyHint: true },
  },
  describe_tool: {
    name: "describe_tool",
    description:
      "One downstream tool's description and full JSON input schema. Accepts server__tool, or server and tool separately.",
    inputSchema: {
      type: "object",
      properties: {
        server: { type: "string" },
        tool: { type: "string", description: "server__tool, or the tool name with server set." },
      },
      required: ["tool"],
    },
    annotations: { readOnlyHint: true },
  },
  resolve_tool: {
    name: "resolve_tool",
    description:
      "Find the best downstream tool for a goal in one call: a recommendation with evidence, required fields and an argument template, ranked alternatives, and a status (confident, ambiguous, no_match). Call it when a task starts or changes phase.",
    inputSchema: {
      type: "object",
      properties: {
        query: QUERY,
        max_hits: { type: "integer", minimum: 1, maximum: 10, default: 5 },
      },
      required: ["query"],
    },
    annotations: { readOnlyHint: true },
  },
  call_tool: {
    name: "call_tool",
    description:
      "Invoke a downstream tool through the gateway. tool is server__tool (or the tool name with server set). A result over the response budget comes back as a receipt with a callId for get_result. detach: true starts it in the background (collect with poll_result). A broken connection is reported as outcome unknown and never retried.",
    inputSchema: {
      type: "object",
      properties: {
        server: { type: "string" },
        tool: { type: "string", description: "server__tool, or the tool name with server set." },
        arguments: { type: "object", description: "The tool's arguments ({} when omitted)." },
        detach: { type: "boolean", description: "Run in the background and return a callId at once." },
        timeout_ms: { type: "integer", minimum: 1, description: "Shortens the gateway's call_timeout." },
      },
      required: ["tool"],
    },
  },
  run_code: {
    name: "run_code",
    description:
      'Run a short JavaScript/TypeScript program (the body of an async function) that calls tools and returns only what you need: `await mcp.tools.server__tool(args)` or `await mcp.call("server__tool", args)` gives the tool\'s structuredContent, else its text parsed as JSON, else its text (a tool error throws); console.log is captured. The program runs in a sandbox with no file, network, process or env access. Returns the value as JSON with {result, logs, calls}. describe_tool run_code (optionally with a query) gives TypeScript declarations of the callable tools.',
    inputSchema: {
      type: "object",
      properties: {
        code: { type: "string", description: "The body of an async function; `return` the answer." },
        timeout: {
          type: "string",
          description: 'How long the program may run, e.g. "30s" (default 30s, capped by call_timeout).',
        },
        detach: { type: "boolean", description: "Run in the background and return a callId at once." },
      },
      required: ["code"],
    },
  },
  get_result: {
    name: "get_result",
    description:
      'Page through a complete result the gateway stored because it exceeded the response budget. Start at cursor 0 and follow nextCursor until done is true. encoding: "utf8" returns text instead of base64.',
    inputSchema: {
      type: "object",
      properties: {
        callId: { type: "string" },
        cursor: { type: "integer", minimum: 0, default: 0 },
        encoding: { type: "string", enum: ["base64", "utf8"], default: "base64" },
      },
      required: ["callId"],
    },
    annotations: { readOnlyHint: true },
  },
  poll_result: {
    name: "poll_result",
    description:
      "Check a detached call (call_tool with detach: true): pending with elapsedMs, failed with the error, or the finished result itself.",
    inputSchema: {
      type: "object",
      properties: { callId: { type: "string" } },
      required: ["callId"],
    },
    annotations: { readOnlyHint: true },
  },
  stats: {
    name: "stats",
    description:
      "Local usage intelligence: calls, errors, estimated tokens and time per server, and how many tokens the result spool kept out of context.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
  },
};

/** describe_tool as advertised with code mode on: `tool: "run_code"` (and a query) gives declarations. */
export const DESCRIBE_TOOL_CODE: Tool = {
  ...META_TOOLS.describe_tool,
  description: `${META_TOOLS.describe_tool.description} With tool "run_code": TypeScript declarations ` +
    "of the tools your code may call (only those a search for query returns, when query is given).",
  inputSchema: {
    ...META_TOOLS.describe_tool.inputSchema,
    properties: {
      ...META_TOOLS.describe_tool.inputSchema.properties,
      query: {
        type: "string",
        description: 'With tool "run_code": declare only the tools a search returns.',
      },
    },
  },
};
