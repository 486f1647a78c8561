/**
 * `mcphub mcp serve`: the gateway on stdin/stdout.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { basename } from "node:path";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { loadContextConfig, stderrLogger, storeLocation, storePath } from "./host.ts";
import { VERSION } from "./version.ts";
import { showConnectProgress } from "./progress.ts";
// The host side's light entry: the gateway itself (the SDK, the hub) loads after a 2025 host's
// `initialize` is answered (start-up time; see gateway/early.ts).
import { answerEarly, gatewayAnswerer, hostInput, type HostStart } from "../gateway/light.ts";
import type { ConfigReloader } from "../gateway/mod.ts";
import type { Hub } from "../hub/mod.ts";
// The config API without `yaml`: a config in the block-YAML subset is read without loading it.
import { type Config, type ListenAddress, loadConfig, parseListen } from "../config/light.ts";
import type { Listener } from "../http/mod.ts";
import type { Telemetry } from "../telemetry/mod.ts";

/**
 * The gateway's telemetry from the environment: spans (and OTLP metrics) when Deno's OpenTelemetry is on
 * (`OTEL_DENO=true`); tool arguments on spans only with `MCPHUB_OTEL_TOOL_ARGUMENTS=true`. Undefined on
 * stdio with OpenTelemetry off (nothing to report to: no cost); the listener always keeps metrics.
 */
export async function telemetryFor(
  env: { get(key: string): string | undefined },
  listening: boolean,
): Promise<Telemetry | undefined> {
  const tracing = env.get("OTEL_DENO") === "true";
  if (!tracing && !listening) return undefined;
  // Loaded only then: a gateway on stdio without OpenTelemetry loads none of it (start-up time).
  const { loadTelemetry } = await import("../telemetry/mod.ts");
  const toolArguments = env.get("MCPHUB_OTEL_TOOL_ARGUMENTS") === "true";
  return await loadTelemetry({ tracing, toolArguments, version: VERSION });
}

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

const HELP =
  `Usage: mcphub mcp serve [--agent NAME] [--listen HOST:PORT] [--no-watch] [--config PATH] [--db PATH]

Runs the gateway as an MCP server on stdin/stdout: an agent host starts it as
its only MCP server and reaches every server in mcphub.yaml through it.
stdout carries only the protocol; logs go to stderr.

With --listen (or listen: in mcphub.yaml) it serves MCP Streamable HTTP at
http://HOST:PORT/mcp instead, to many hosts at once over one set of server
connections: /mcp with an agent's bearer token (agents.NAME.token) is that
agent's scope, /mcp/AGENT the same with that agent's token. Without tokens it
binds loopback only. GET /healthz, /readyz; GET / is the live stats page.
SIGTERM drains running calls (up to 10 s), ends the sessions and the servers.

Edits of mcphub.yaml apply while it runs (hot reload): changed servers are
reconnected, removed ones stopped, added ones started, the others untouched.
It also reloads on SIGHUP. An invalid edit is logged and the running config kept.

Options:
  --agent NAME        Scope the gateway to an agent defined under agents: in mcphub.yaml
                      (with --listen: the scope of /mcp when no tokens are configured)
  --listen HOST:PORT  Serve over HTTP on this address (":8080" = 127.0.0.1:8080; port 0 = any)
  --no-watch          Do not watch the config file; reload only on SIGHUP
  --config PATH       Config file (default: ./mcphub.yaml, then ~/.config/mcphub/)
  --db PATH           Store for oversized results and call records

Add it to your MCP host (Claude Code, Claude Desktop, Cursor): mcphub hosts use HOST writes
this entry with the absolute path a host started from the desktop needs:
${HOST_SNIPPET}
`;

/**
 * For a person at a terminal: once no server is still connecting, one stderr line saying the
 * gateway is ready, what connected and how to stop. Reads the hub's states only.
 */
function announceReady(hub: Hub, ctx: CommandContext, beforeReady: () => void): () => void {
  let unsubscribe = () => {};
  const check = () => {
    const servers = hub.servers().filter((s) => s.state !== "disabled");
    if (servers.some((s) => s.state === "connecting")) return;
    unsubscribe();
    beforeReady();
    ctx.err(readyLine(servers) + "\n");
  };
  unsubscribe = hub.onChange(check);
  queueMicrotask(check);
  return () => unsubscribe();
}

/**
 * How long `mcp serve` on stdio waits for the host's first line before loading the gateway anyway (see
 * gateway/early.ts): a host writes `initialize` as soon as it starts the process, before this passes.
 */
const IDLE_LOAD_MS = 50;

/** Package runners that download a server the first time it runs. */
const DOWNLOADERS = /^(npx|uvx|bunx|pnpx|pipx)(\.cmd|\.exe)?$/i;

/**
 * What a person waits for at start: `connecting 3 servers — the first run downloads them` (when a server is
 * started by a package runner such as npx or uvx), or undefined when no server is enabled.
 */
export function connectingLine(
  servers: readonly { enabled: boolean; command?: string; args?: readonly string[] }[],
): string | undefined {
  const enabled = servers.filter((s) => s.enabled);
  if (!enabled.length) return undefined;
  const downloads = enabled.some((s) =>
    s.command !== undefined &&
    (DOWNLOADERS.test(basename(s.command)) || (/^(pnpm|yarn|bun)$/.test(basename(s.command)) &&
      /^(dlx|x)$/.test(s.args?.[0] ?? "")))
  );
  return `connecting ${enabled.length} server${enabled.length === 1 ? "" : "s"}${
    downloads ? ` — the first run downloads ${enabled.length === 1 ? "it" : "them"}` : ""
  }`;
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
  options: {
    agent?: string;
    watch: boolean;
    log: (line: string) => void;
    Reloader: typeof ConfigReloader;
  },
): () => void {
  const path = config.path;
  const reloader = path === undefined ? undefined : new options.Reloader({
    hub,
    path,
    load: () =>
      loadConfig(path, { env: ctx.env, cwd: ctx.cwd, agent: options.agent, serverErrors: "fail-server" }),
    log: options.log,
    watch: options.watch,
    keepOut: [storePath(ctx, config)],
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
    let address: ListenAddress | undefined;
    if (values.listen !== undefined) {
      try {
        address = parseListen(values.listen);
      } catch (error) {
        throw new UsageError(`--listen ${(error as Error).message}`, "mcp serve");
      }
    }
    let log = stderrLogger(ctx);
    // With --listen every agent's servers are served: the load is not scoped to --agent.
    let config = await loadContextConfig(ctx, address ? undefined : values.agent);
    if (address === undefined && config.listen !== undefined) {
      address = parseListen(config.listen);
      if (values.agent !== undefined) config = await loadContextConfig(ctx);
    }
    if (address !== undefined) {
      return await serveHttp(ctx, config, address, { agent: values.agent, watch: !values["no-watch"], log });
    }
    const human = Deno.stdin.isTerminal();
    if (human) {
      ctx.err(
        "mcphub mcp serve speaks MCP (JSON-RPC) on stdin/stdout; an agent host starts it for you.\n" +
          "With mcphub installed (see the README), `mcphub hosts use HOST` writes this entry into a host's " +
          "config, by absolute path and with the secrets its servers need:\n" +
          `${HOST_SNIPPET}\n`,
      );
      const waiting = connectingLine(config.servers);
      if (waiting) ctx.err(`mcphub: ${waiting}\n`);
      // Log lines go above the progress line (which the next redraw puts back).
      const plain = log;
      log = (line) => {
        if (ctx.stderrIsTerminal ?? Deno.stderr.isTerminal()) ctx.err("\r\x1b[K");
        plain(line);
      };
    }
    const input = await hostInput();
    // Once asked for, the same load: a host that has not written within IDLE_LOAD_MS has the gateway
    // loading meanwhile (hosts write `initialize` at once; one that waits is answered sooner after).
    let gatewayModule: Promise<typeof import("../gateway/mod.ts")> | undefined;
    const loadGateway = () => gatewayModule ??= import("../gateway/mod.ts");
    // A 2025 host's `initialize` is answered before the gateway loads (not at a terminal, where no host
    // is; nor with OpenTelemetry on: the gateway answers it within its span).
    let early: HostStart | undefined;
    if (!human && ctx.env.get("OTEL_DENO") !== "true") {
      const answer = gatewayAnswerer({
        config,
        agent: values.agent,
        storePath: storeLocation(ctx, config),
        version: VERSION,
      });
      // SIGINT/SIGTERM while the host has sent nothing yet: stop here (nothing is running yet).
      const stopped = Promise.withResolvers<undefined>();
      const onAbort = () => stopped.resolve(undefined);
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      if (ctx.signal.aborted) onAbort();
      const idle = setTimeout(loadGateway, IDLE_LOAD_MS);
      early = await Promise.race([
        answerEarly(input, answer, (bytes) => Deno.stdout.writeSync(bytes)),
        stopped.promise,
      ]);
      clearTimeout(idle);
      ctx.signal.removeEventListener("abort", onAbort);
      if (!early) return 0;
    }
    const { ConfigReloader, startGateway } = await loadGateway();
    const running = startGateway({
      config,
      agent: values.agent,
      env: ctx.env.toObject(),
      version: VERSION,
      log,
      storePath: storeLocation(ctx, config),
      authStorePath: storePath(ctx, config),
      loginCommand: (server) => loginCommandFor(ctx, config.path, server),
      // The rest of stdin after what was read early (none when it ended then).
      input: early ? early.rest ?? ReadableStream.from<Uint8Array>([]) : input,
      early,
      output: Deno.stdout.writable,
      outputSync: (bytes) => Deno.stdout.writeSync(bytes),
      // A person at a terminal: connect now, so the ready line can say what connected.
      connectAtStart: human,
      telemetry: await telemetryFor(ctx.env, false),
    });
    const stopProgress = human ? showConnectProgress(running.hub, ctx) : () => {};
    const stopReady = human ? announceReady(running.hub, ctx, stopProgress) : () => {};
    const stopReload = hotReload(ctx, running.hub, config, {
      agent: values.agent,
      watch: !values["no-watch"],
      log,
      Reloader: ConfigReloader,
    });
    const stop = () => running.stop();
    ctx.signal.addEventListener("abort", stop, { once: true });
    // A signal while the gateway loaded.
    if (ctx.signal.aborted) stop();
    try {
      await running.done;
    } finally {
      stopReload();
      stopReady();
      stopProgress();
      ctx.signal.removeEventListener("abort", stop);
    }
    return 0;
  },
};

/** `mcp serve --listen`: the HTTP listener until SIGINT/SIGTERM. */
async function serveHttp(
  ctx: CommandContext,
  config: Config,
  address: ListenAddress,
  options: { agent?: string; watch: boolean; log: (line: string) => void },
): Promise<number> {
  const { agent, log } = options;
  if (agent !== undefined && !config.agents.some((a) => a.name === agent)) {
    const names = config.agents.map((a) => a.name);
    throw new UsageError(
      `unknown agent "${agent}"; ${
        names.length ? `defined agents: ${names.join(", ")}` : "no agents are defined"
      }`,
      "mcp serve",
    );
  }
  let listener: Listener;
  // Loaded here, not at start: a gateway on stdio never needs the HTTP listener.
  const { listen } = await import("../http/mod.ts");
  try {
    listener = await listen({
      config,
      agent,
      env: ctx.env.toObject(),
      tokenEnv: ctx.env,
      version: VERSION,
      log,
      storePath: storeLocation(ctx, config),
      authStorePath: storePath(ctx, config),
      loginCommand: (server) => loginCommandFor(ctx, config.path, server),
      address,
      telemetry: await telemetryFor(ctx.env, true),
    });
  } catch (error) {
    if (error instanceof RangeError) {
      throw new Error(`mcp serve --listen: ${error.message}`, { cause: error });
    }
    if (error instanceof Deno.errors.AddrInUse) {
      throw new Error(
        `mcp serve --listen: ${address.hostname}:${address.port} is in use; stop what listens there or pick ` +
          "another port",
        { cause: error },
      );
    }
    throw error;
  }
  // The line tests and scripts wait for: the real address (port 0 picks one).
  ctx.err(`mcphub: listening on ${listener.origin}/mcp\n`);
  // Hot reload applies to the shared hub (unscoped); every agent's view follows it.
  const { ConfigReloader } = await import("../gateway/mod.ts");
  const stopReload = hotReload(ctx, listener.core.hub, config, {
    watch: options.watch,
    log,
    Reloader: ConfigReloader,
  });
  const stop = () => void listener.stop();
  ctx.signal.addEventListener("abort", stop, { once: true });
  try {
    await listener.done;
  } finally {
    stopReload();
    ctx.signal.removeEventListener("abort", stop);
  }
  return 0;
}
