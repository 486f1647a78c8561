/**
 * The conformance suite's client under test: mcphub. The suite runs
 * `deno run -A tests/auth/conformance_client.ts <server-url>` with
 * MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT for pre-registered
 * clients); this points an mcphub.yaml at the scenario's server, starts
 * `mcphub mcp serve`, logs in with `mcphub auth login --headless` when the
 * server reports needs_auth, then lists and calls the server's tools through
 * the gateway with the SDK client, as the suite's own client does.
 * Exit 0 when the calls worked.
 */
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const url = Deno.args.at(-1);
if (!url) {
  console.error("usage: conformance_client.ts <server-url>");
  Deno.exit(2);
}
const context = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") ?? "{}") as Record<string, string>;
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
const dir = await Deno.makeTempDir({ prefix: "mcphub-conformance-" });
const config = `${dir}/mcphub.yaml`;
const db = `${dir}/mcphub.db`;
const env: Record<string, string> = { ...Deno.env.toObject() };

let oauth = "";
if (context.client_id && context.client_secret) {
  env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
  oauth = `
    oauth:
      client_id: ${JSON.stringify(context.client_id)}
      client_secret: \${CONFORMANCE_CLIENT_SECRET}${
    scenario.startsWith("auth/client-credentials") ? "\n      grant: client_credentials" : ""
  }`;
}
await Deno.writeTextFile(config, `servers:\n  conf:\n    url: ${JSON.stringify(url)}${oauth}\n`);

const log = (line: string) => console.error(`[conformance_client] ${line}`);
const transport = new StdioClientTransport({
  command: Deno.execPath(),
  args: ["run", "-A", `${ROOT}main.ts`, "--config", config, "--db", db, "mcp", "serve"],
  env,
  stderr: "inherit",
});
// As the suite's own client: it offers elicitation and accepts with the schema's defaults (SEP-1034).
const client = new Client({ name: "mcphub-conformance", version: "1.0.0" }, {
  capabilities: { elicitation: { form: { applyDefaults: true } } },
});
client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept" as const, content: {} }));

/** Arguments for a tool: a plain value for each required property, by its type. */
function sampleArguments(schema: { properties?: Record<string, { type?: string }>; required?: string[] }) {
  const sample: Record<string, unknown> = { number: 1, integer: 1, boolean: true, string: "x" };
  return Object.fromEntries(
    (schema.required ?? []).map((key) => [key, sample[schema.properties?.[key]?.type ?? "string"] ?? "x"]),
  );
}

interface Status {
  name: string;
  state: string;
  error?: string;
}
async function state(): Promise<Status> {
  const result = await client.callTool({ name: "list_servers", arguments: {} }) as unknown as {
    structuredContent: { servers: Status[] };
  };
  return result.structuredContent.servers[0]!;
}
async function settle(): Promise<Status> {
  for (let i = 0; i < 800; i++) {
    const s = await state();
    if (s.state !== "connecting") return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  // Fails loudly (this client runs alone, without tests/helpers.ts's serversReady).
  throw new Error(`the server is still connecting after 800 polls: ${JSON.stringify(await state())}`);
}

/** What a user does when the gateway says needs_auth: run `mcphub auth login`, then wait for the pickup. */
async function logIn(): Promise<Status> {
  const login = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}main.ts`,
      "--config",
      config,
      "--db",
      db,
      "auth",
      "login",
      "conf",
      "--headless",
    ],
    env,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  log(`auth login exited ${login.code}`);
  // The gateway picks the new login up on its own: poll for it (no event reaches this client), as long
  // as tests/helpers.ts's until would (800 × 50 ms), and fail loudly naming the last state, not return it.
  let s = await state();
  for (let i = 0; i < 800 && s.state !== "connected"; i++) {
    await new Promise((r) => setTimeout(r, 50));
    s = await state();
  }
  if (s.state !== "connected") {
    throw new Error(`the server did not connect within 800 polls after auth login: ${JSON.stringify(s)}`);
  }
  return s;
}

let code = 1;
try {
  await client.connect(transport);
  let s = await settle();
  log(`after connecting: ${s.state}${s.error ? ` (${s.error})` : ""}`);
  if (s.state === "needs_auth") s = await logIn();
  if (s.state !== "connected") throw new Error(`server not connected: ${s.state} ${s.error ?? ""}`);
  const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith("conf__"));
  log(`tools: ${tools.map((t) => t.name).join(", ")}`);
  let failed = false;
  for (const tool of tools) {
    const args = sampleArguments(tool.inputSchema as Parameters<typeof sampleArguments>[0]);
    let result = await client.callTool({ name: tool.name, arguments: args });
    if (result.isError && (await state()).state === "needs_auth") {
      // Step-up: the server wants more scope; log in again (the login asks for it) and retry.
      log(`${tool.name}: needs_auth, logging in again`);
      await logIn();
      result = await client.callTool({ name: tool.name, arguments: args });
    }
    log(`${tool.name}: ${result.isError ? "error" : "ok"} ${JSON.stringify(result.content).slice(0, 300)}`);
    failed ||= result.isError === true;
  }
  code = failed ? 1 : 0;
} catch (error) {
  log(`failed: ${(error as Error).message}`);
} finally {
  await client.close().catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
Deno.exit(code);
