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
  stderr: "pipe",
});
/** The gateway's log line when it picks a stored login up (src/downstream/downstream.ts, pickUpLogin). */
const PICKED_UP = 'server "conf": found a new login, reconnecting';
/** How many times the gateway said it picked a login up: the event {@link logIn} waits for. */
let pickups = 0;
// The gateway's stderr, passed on whole (the suite prints it) and read for the pickup line.
let pending = "";
const stderrText = new TextDecoder();
transport.stderr?.on("data", (chunk: Uint8Array) => {
  Deno.stderr.writeSync(chunk);
  const lines = (pending + stderrText.decode(chunk, { stream: true })).split("\n");
  pending = lines.pop()!;
  pickups += lines.filter((line) => line.includes(PICKED_UP)).length;
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

/**
 * What a user does when the gateway says needs_auth: run `mcphub auth login`, then wait for the pickup.
 * Waits on the event, not out a deadline: the gateway logs the pickup, then reconnects, ending connected
 * or back in needs_auth (a server that still refuses the token: scope-retry-limit) — needs_auth waits for
 * the next login and never authorizes by itself, so there is nothing more to wait for. A login that failed
 * stored nothing to pick up: it fails here at once.
 */
async function logIn(): Promise<Status> {
  const before = pickups;
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
  if (login.code !== 0) {
    throw new Error(`auth login exited ${login.code}: no login for the gateway to pick up`);
  }
  // The gateway picks the new login up on its own (no event reaches this client but its log line): poll
  // for the line and then the end of the reconnection it starts, as long as tests/helpers.ts's until would
  // (800 × 50 ms), and fail loudly naming the last state, not return it.
  for (let i = 0;; i++) {
    // Read before asking: a state asked for after the line was seen is the reconnection's or later.
    const pickedUp = pickups > before;
    const s = await state();
    if (s.state === "connected") return s;
    if (pickedUp && s.state !== "connecting") {
      throw new Error(`the server is ${s.state} after picking up the login: ${JSON.stringify(s)}`);
    }
    if (i >= 800) {
      throw new Error(
        `the server did not ${
          pickedUp ? "connect" : "pick up the login"
        } within 800 polls after auth login: ` +
          JSON.stringify(s),
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
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
