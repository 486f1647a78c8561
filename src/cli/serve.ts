/**
 * `mcphub mcp serve`: the gateway on stdin/stdout.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { loadContextConfig, stderrLogger, storePath } from "./host.ts";
import { VERSION } from "./version.ts";
import { ConfigReloader, type Hub, startGateway } from "../hub/mod.ts";
import { type Config, loadConfig } from "../config/mod.ts";

/** The exact `auth login` command for this gateway's config and store (flags only where they were given). */
export function loginCommandFor(ctx: CommandContext, configPath: string | undefined, server: string): string {
  const quote = (text: string) => /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
  const parts = ["mcphub"];
  if (configPath && (ctx.global.config || ctx.env.get("MCPHUB_CONFIG"))) {
    parts.push("--config", quote(configPath));
  }
  if (ctx.global.db || ctx.env.get("MCPHUB_DB")) parts.push("--db", quote(storePath(ctx)));
  parts.push("auth", "login", server);
  return parts.join(" ");
}

/** The MCP host config snippet, for help and for a human at a terminal. */
export const HOST_SNIPPET = `{
  "mcpServers": {
    "mcphub": { "command": "mcphub", "args": ["mcp", "serve"] }
  }
}`;

const HELP = `Usage: mcphub mcp serve [--agent NAME] [--no-watch] [--config PATH] [--db PATH]

Runs the gateway as an MCP server on stdin/stdout: an agent host starts it as
its only MCP server and reaches every server in mcphub.yaml through it.
stdout carries only the protocol; logs go to stderr.

Edits of mcphub.yaml apply while it runs (hot reload): changed servers are
reconnected, removed ones stopped, added ones started, the others untouched.
It also reloads on SIGHUP. An invalid edit is logged and the running config kept.

Options:
  --agent NAME    Scope the gateway to an agent defined under agents: in mcphub.yaml
  --no-watch      Do not watch the config file; reload only on SIGHUP
  --config PATH   Config file (default: ./mcphub.yaml, then ~/.config/mcphub/)
  --db PATH       Store for oversized results and call records

Add it to your MCP host (Claude Code, Claude Desktop, Cursor):
${HOST_SNIPPET}
`;

/**
 * For a person at a terminal: once no server is still connecting, one stderr line saying the
 * gateway is ready, what connected and how to stop. Reads the hub's states only.
 */
function announceReady(hub: Hub, ctx: CommandContext): () => void {
  let unsubscribe = () => {};
  const check = () => {
    const servers = hub.servers().filter((s) => s.state !== "disabled");
    if (servers.some((s) => s.state === "connecting")) return;
    unsubscribe();
    ctx.err(readyLine(servers) + "\n");
  };
  unsubscribe = hub.onChange(check);
  queueMicrotask(check);
  return () => unsubscribe();
}

/** `mcphub: ready: 3 of 3 servers connected, 37 tools; waiting for MCP messages on stdin (Ctrl-C or Ctrl-D to stop)`. */
export function readyLine(servers: readonly { name: string; state: string; tools: number }[]): string {
  const up = servers.filter((s) => s.state === "connected");
  const down = servers.filter((s) => s.state !== "connected");
  const tools = up.reduce((sum, s) => sum + s.tools, 0);
  const what = servers.length === 0
    ? "no servers configured"
    : `${up.length} of ${servers.length} server${servers.length === 1 ? "" : "s"} connected, ${tools} tool${
      tools === 1 ? "" : "s"
    }${down.length ? ` (not connected: ${down.map((s) => `${s.name} (${s.state})`).join(", ")})` : ""}`;
  return `mcphub: ready: ${what}; waiting for MCP messages on stdin (Ctrl-C or Ctrl-D to stop)`;
}

/**
 * Reloads the config on every change of its file (unless `watch` is false) and on SIGHUP, from the file
 * loaded at start (never another one found by lookup). Returns the function that stops both.
 */
function hotReload(
  ctx: CommandContext,
  hub: Hub,
  config: Config,
  options: { agent?: string; watch: boolean; log: (line: string) => void },
): () => void {
  const path = config.path;
  const reloader = path === undefined ? undefined : new ConfigReloader({
    hub,
    path,
    load: () =>
      loadConfig(path, { env: ctx.env, cwd: ctx.cwd, agent: options.agent, serverErrors: "fail-server" }),
    log: options.log,
    watch: options.watch,
  });
  const onHangup = () => {
    if (reloader) reloader.reload("SIGHUP");
    else options.log("SIGHUP: nothing to reload (running on the embedded default config, no file)");
  };
  let listening = false;
  try {
    Deno.addSignalListener("SIGHUP", onHangup);
    listening = true;
  } catch {
    // no SIGHUP on this platform (Windows): the file watch still reloads
  }
  return () => {
    reloader?.close();
    if (listening) Deno.removeSignalListener("SIGHUP", onHangup);
  };
}

/** `mcp serve`. */
export const serveCommand: Command = {
  name: "mcp serve",
  summary: "Run the gateway as an MCP server on stdin/stdout",
  help: HELP,
  async run(ctx: CommandContext): Promise<number> {
    const { values } = parseCommandArgs("mcp serve", () =>
      parseArgs({
        args: ctx.args,
        options: { agent: { type: "string" }, listen: { type: "string" }, "no-watch": { type: "boolean" } },
        strict: true,
        allowPositionals: false,
      }));
    if (values.listen !== undefined) {
      throw new UsageError("--listen is not available yet; the gateway serves on stdin/stdout", "mcp serve");
    }
    const log = stderrLogger(ctx);
    const config = await loadContextConfig(ctx, values.agent);
    const human = Deno.stdin.isTerminal();
    if (human) {
      ctx.err(
        "mcphub mcp serve speaks MCP (JSON-RPC) on stdin/stdout; an agent host starts it for you.\n" +
          `With mcphub installed (see the README), add it to your MCP host's config:\n${HOST_SNIPPET}\n`,
      );
    }
    const running = startGateway({
      config,
      agent: values.agent,
      env: ctx.env.toObject(),
      version: VERSION,
      log,
      storePath: storePath(ctx),
      loginCommand: (server) => loginCommandFor(ctx, config.path, server),
      input: Deno.stdin.readable,
      output: Deno.stdout.writable,
      // A person at a terminal: connect now, so the ready line can say what connected.
      connectAtStart: human,
    });
    const stopReady = human ? announceReady(running.hub, ctx) : () => {};
    const stopReload = hotReload(ctx, running.hub, config, {
      agent: values.agent,
      watch: !values["no-watch"],
      log,
    });
    const stop = () => running.stop();
    ctx.signal.addEventListener("abort", stop, { once: true });
    try {
      await running.done;
    } finally {
      stopReload();
      stopReady();
      ctx.signal.removeEventListener("abort", stop);
    }
    return 0;
  },
};
