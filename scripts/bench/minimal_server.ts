/**
 * The smallest useful stdio MCP server on the official SDK, run by Deno: one
 * `echo` tool. The start-up baseline of `gateway_bench.ts`.
 *
 * Usage: deno run -A scripts/bench/minimal_server.ts
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/sdk/server";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "minimal", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{
    name: "echo",
    description: "Echoes the message back.",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  }],
}));

server.setRequestHandler(CallToolRequestSchema, (request) => {
  if (request.params.name !== "echo") {
    return { content: [{ type: "text", text: `Unknown tool: ${request.params.name}` }], isError: true };
  }
  return { content: [{ type: "text", text: `Echo: ${String(request.params.arguments?.message ?? "")}` }] };
});

await server.connect(new StdioServerTransport());
