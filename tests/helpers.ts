/**
 * Shared test helpers: paths of the real servers, temp configs, and an SDK
 * client connected to a gateway process (`deno run main.ts mcp serve`).
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import { type Config, loadConfig, parseConfig } from "../src/config/mod.ts";
import { defaultStorePath, isPostgresUrl } from "../src/store/mod.ts";
import { derivePermissions, linkerEnvNames, whichCommand } from "../src/cli/permissions.ts";
import { runCli } from "../src/cli/run.ts";

/** Repository root, with a trailing slash. */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MODULES = `${ROOT}tests/servers/node_modules/@modelcontextprotocol/`;

/** Entry scripts of the pinned real servers (run with `node`). */
export const REAL = {
  everything: `${MODULES}server-everything/dist/index.js`,
  filesystem: `${MODULES}server-filesystem/dist/index.js`,
  memory: `${MODULES}server-memory/dist/index.js`,
};

/** The fixture server script. */
export const FIXTURE = `${ROOT}tests/fixtures/fixture_server.ts`;

/** The deno executable running the tests. */
export const DENO = Deno.execPath();

/** The hostile fixture server script (modes for each case of issue #12). */
export const HOSTILE = `${ROOT}tests/fixtures/hostile_server.ts`;

/**
 * Runs `deno run -A SCRIPT ARGS` (a test server speaking HTTP) and resolves once it prints `listening on
 * PORT` on stdout — the one reader of that line for every such fixture. `what` names it in the error when it
 * exits first; `stderr` is inherited unless "null". Disposing it stops it (if a test has not already).
 */
export async function startHttpServer(
  script: string,
  args: string[],
  options: { what?: string; stderr?: "inherit" | "null" } = {},
): Promise<{ port: number } & AsyncDisposable> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", script, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: options.stderr ?? "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let match: RegExpMatchArray | null = null;
  while (!(match = text.match(/listening on (\d+)\n/))) {
    const { value, done } = await lines.read();
    if (done) {
      throw new Error(
        `${options.what ?? script} exited before listening: ${JSON.stringify(await child.status)}`,
      );
    }
    text += value;
  }
  const drained = (async () => {
    while (!(await lines.read()).done);
  })();
  return {
    port: Number(match[1]),
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch {
        // it exited already (a test made it)
      }
      await child.status;
      await drained;
    },
  };
}

/**
 * The hostile fixture serving HTTP with `args` (`/mcp`: Streamable HTTP with JSON answers, `/mcp-sse`: with
 * SSE answers, `/sse`: the older HTTP+SSE transport); resolves once it listens. Disposing it stops it.
 */
export function startHostileHttp(args: string[]): Promise<{ port: number } & AsyncDisposable> {
  return startHttpServer(HOSTILE, [...args, "--http"], { what: "the hostile fixture" });
}

/** A small deterministic PRNG (mulberry32): values in [0, 1), so a failure can be replayed from its seed. */
export function prng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A YAML-safe double-quoted string. */
export function q(text: string): string {
  return JSON.stringify(text);
}

/** A temp dir removed by `Symbol.asyncDispose`. */
export async function tempDir(prefix = "mcphub-test-"): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/** A connected SDK client to a gateway process. */
export interface GatewayClient extends AsyncDisposable {
  client: Client;
  transport: StdioClientTransport;
  /** Collected stderr of the gateway. */
  stderr(): string;
  close(): Promise<void>;
}

/** Options of {@linkcode connectGateway}. */
export interface ConnectGatewayOptions {
  /** Extra args after `mcp serve`. */
  args?: string[];
  env?: Record<string, string>;
  db?: string;
  /** Run under -A instead of the permissions derived from the config. @default false */
  allowAll?: boolean;
  /** Run under exactly these permission flags instead of the derived ones. */
  flags?: readonly string[];
  /** The client to connect (with its capabilities and handlers). @default a plain SDK Client */
  client?: Client;
  /** Opt-in: the gateway gets the test's whole environment (the real HOME) instead of a {@linkcode Sandbox}. */
  realEnv?: boolean;
}

/**
 * The Deno flags the gateway gets for a config: exactly what `mcphub permissions`
 * derives, so a permission the code needs but the set lacks fails a test, not a user.
 */
export async function gatewayFlags(
  configPath: string,
  db: string,
  options: { agent?: string; env?: Record<string, string>; listen?: string; base?: Record<string, string> } =
    {},
): Promise<string[]> {
  const env = { ...(options.base ?? Deno.env.toObject()), ...options.env };
  const lookup = { get: (key: string) => env[key] };
  const config = await loadConfig(configPath, { env: lookup, cwd: Deno.cwd(), agent: options.agent });
  // A shared PostgreSQL store: its address joins --allow-net; OAuth tokens stay in the local default file.
  const shared = isPostgresUrl(db);
  return derivePermissions(config, {
    storePath: shared ? defaultStorePath(lookup) : db,
    storeUrl: shared ? db : undefined,
    agent: options.agent,
    listen: options.listen,
    cwd: Deno.cwd(),
    which: (command, searchPath) => whichCommand(command, { ...env, PATH: searchPath ?? env.PATH }),
  }).flags;
}

/** Starts `mcphub mcp serve --config PATH` and connects the official SDK client to it. */
export async function connectGateway(
  configPath: string,
  options: ConnectGatewayOptions = {},
): Promise<GatewayClient> {
  const db = options.db ?? `${configPath}.db`;
  const extra = options.args ?? [];
  const agentAt = extra.indexOf("--agent");
  const agent = agentAt >= 0 ? extra[agentAt + 1] : undefined;
  const box = options.realEnv ? undefined : sandboxSync();
  const base = box?.env ?? Deno.env.toObject();
  const flags = options.allowAll ? ["-A"] : [
    "--no-prompt",
    ...options.flags ?? await gatewayFlags(configPath, db, { agent, env: options.env, base }),
  ];
  const env = { ...base, ...options.env };
  // Deno refuses LD_*/DYLD_* variables to children under a restricted --allow-run.
  if (!options.allowAll) { for (const name of linkerEnvNames(env)) delete env[name]; }
  const transport = new StdioClientTransport({
    command: DENO,
    args: [
      "run",
      ...flags,
      `${ROOT}main.ts`,
      "--config",
      configPath,
      "--db",
      db,
      "mcp",
      "serve",
      ...(options.args ?? []),
    ],
    env,
    stderr: "pipe",
  });
  let stderr = "";
  const decoder = new TextDecoder();
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += decoder.decode(chunk, { stream: true }));
  const client = options.client ?? new Client({ name: "mcphub-test", version: "1.0.0" });
  const close = async () => {
    await client.close().catch(() => {});
    await box?.[Symbol.asyncDispose]();
  };
  await client.connect(transport).catch(async (e) => {
    await close();
    throw e;
  });
  return { client, transport, stderr: () => stderr, close, [Symbol.asyncDispose]: close };
}

/** A connected SDK client straight to a stdio server (the baseline). */
export async function connectDirect(
  command: string,
  args: string[],
  env?: Record<string, string>,
  client: Client = new Client({ name: "mcphub-test-direct", version: "1.0.0" }),
): Promise<Client> {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...Deno.env.toObject(), ...env },
    stderr: "ignore",
  });
  await client.connect(transport);
  return client;
}

/** The real Deno cache (DENO_DIR): sandboxes point at it so nothing is downloaded again. */
export const REAL_DENO_DIR = Deno.env.get("DENO_DIR") ??
  `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache`}/deno`;

/**
 * Variables of the test's environment a sandboxed child keeps (when set): what Deno, npm and node need to
 * find programs, trust the network's certificate authorities, go through its proxy and write coverage.
 */
export const SANDBOX_PASSED_ENV = [
  "PATH",
  "LANG",
  "TZ",
  "TMPDIR",
  "NO_COLOR",
  "CI",
  "DENO_COVERAGE_DIR",
  "DENO_CERT",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
] as const;

/**
 * A CLI/gateway sandbox: a temp HOME with its own XDG config, data, state and cache directories, so a
 * child never reads the user's config nor writes the user's store (`defaultStorePath` lands in
 * `${home}/.local/share`); `db` is a store path inside it. `env` is the whole environment a child gets:
 * {@linkcode SANDBOX_PASSED_ENV} from the test's own, HOME and XDG_* here, DENO_DIR the real Deno cache
 * and npm's cache the real one (nothing is downloaded again). Disposing it removes the directory.
 */
export interface Sandbox extends AsyncDisposable {
  home: string;
  db: string;
  env: Record<string, string>;
}

/** The environment of a sandbox whose HOME is `home` (see {@linkcode Sandbox}). */
export function sandboxEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of SANDBOX_PASSED_ENV) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const realHome = Deno.env.get("HOME") ?? "/root";
  return {
    ...env,
    PATH: env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_STATE_HOME: `${home}/.local/state`,
    XDG_CACHE_HOME: `${home}/.cache`,
    DENO_DIR: REAL_DENO_DIR,
    npm_config_cache: Deno.env.get("npm_config_cache") ?? `${realHome}/.npm`,
  };
}

/** Creates a {@linkcode Sandbox} (synchronously, so a constructor can use it). */
export function sandboxSync(): Sandbox {
  const home = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "mcphub-home-" }));
  return {
    home,
    db: `${home}/mcphub-test.db`,
    env: sandboxEnv(home),
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** Creates a {@linkcode Sandbox}. */
export function sandbox(): Promise<Sandbox> {
  return Promise.resolve(sandboxSync());
}

/** Options of {@linkcode runMcphub}. */
export interface RunOptions {
  /** Added to the sandbox's environment (or to the test's own with `realEnv`). */
  env?: Record<string, string>;
  /** @default the repository root */
  cwd?: string;
  /** Run in this sandbox (state kept between runs). @default a fresh one, removed after the run */
  sandbox?: Sandbox;
  /** Opt-in: the child gets the test's whole environment (the real HOME) instead of a sandbox. */
  realEnv?: boolean;
  /** Bytes written to stdin (then closed). @default stdin is null */
  stdin?: string;
}

/**
 * Runs `deno run -A main.ts ARGS` (the CLI as a user runs it from source) to its end, in a
 * {@linkcode Sandbox} unless `realEnv` says otherwise: the user's HOME, config and store are never touched.
 */
export async function runMcphub(
  args: string[],
  options: RunOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  await using own = options.sandbox || options.realEnv ? undefined : await sandbox();
  const base = options.realEnv ? Deno.env.toObject() : (options.sandbox ?? own)!.env;
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}main.ts`, ...args],
    cwd: options.cwd ?? ROOT,
    env: { ...base, ...options.env },
    clearEnv: true,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin)).catch(() => {});
    await writer.close().catch(() => {});
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** One in-process CLI run ({@linkcode runCliHere}). */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the CLI in this process (`runCli`), with exactly `env` as its environment (nothing of the test's
 * own: give a {@linkcode sandboxEnv} for a HOME) and `cwd` (default: the repository root). `onErr` sees
 * each stderr write as it happens, with stdout so far; `stderrIsTerminal` is passed on.
 */
export async function runCliHere(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    stderrIsTerminal?: boolean;
    onErr?: (text: string, outSoFar: string) => void;
  } = {},
): Promise<CliRun> {
  const env = { ...options.env };
  let out = "";
  let err = "";
  const code = await runCli(args, {
    env: { get: (key) => env[key], toObject: () => ({ ...env }) },
    cwd: options.cwd ?? ROOT,
    out: (text) => void (out += text),
    err: (text) => {
      options.onErr?.(text, out);
      err += text;
    },
    signal: new AbortController().signal,
    ...(options.stderrIsTerminal === undefined ? {} : { stderrIsTerminal: options.stderrIsTerminal }),
  });
  return { code, out, err };
}

/** Writes `mcphub.yaml` into `dir` and returns its path. */
export async function writeConfig(dir: string, yaml: string, name = "mcphub.yaml"): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, yaml);
  return path;
}

/** Pids of every descendant of `pid` (Linux /proc). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry.name));
      children.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** True while a process with this pid exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Calls `probe` every 50 ms until it returns a value (for state only polling can observe). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 40_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Fails the test (never a synchronisation) when `promise` takes longer than `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves with the gateway's stderr once it holds more than `seen` matches of `pattern`, on the pipe's own
 * data events. stderr is a pipe of its own: a line the gateway logged before it answered on stdout can
 * arrive after the answer, so a test awaits the line instead of asserting it is there already. Fails at
 * the deadline, with the stderr seen so far.
 */
export async function stderrMatches(
  gw: Pick<GatewayClient, "stderr" | "transport">,
  pattern: RegExp,
  seen = 0,
  ms = 60_000,
): Promise<string> {
  const count = () =>
    [...gw.stderr().matchAll(new RegExp(pattern.source, pattern.flags.replace("g", "") + "g"))]
      .length;
  const stream = gw.transport.stderr;
  let check = () => {};
  try {
    await within(
      new Promise<void>((resolve) => {
        check = () => void (count() > seen && resolve());
        stream?.on("data", check);
        check();
      }),
      `stderr ${pattern}`,
      ms,
    );
  } catch (error) {
    throw new Error(
      `timed out: stderr to hold ${seen + 1} match(es) of ${pattern}; it holds:\n${gw.stderr().slice(-2000)}`,
      { cause: error },
    );
  } finally {
    stream?.off("data", check);
  }
  return gw.stderr();
}

/** One row of the gateway's `list_servers`. */
export interface ServerRow {
  name: string;
  state: string;
  error?: string;
  tools?: number;
  [key: string]: unknown;
}

/** The rows of the gateway's `list_servers`. */
export async function listServers(client: Client): Promise<ServerRow[]> {
  return structured<{ servers: ServerRow[] }>(await client.callTool({ name: "list_servers", arguments: {} }))
    .servers;
}

/**
 * Waits until the gateway's servers are past their start (none is `connecting`), or, with `state`, until
 * each is in that state; `only` limits it to those servers. Built on {@linkcode until}: it polls
 * `list_servers` (the gateway has no event a client could await) and throws at its deadline, naming each
 * server's last state. `source` is an SDK client or a function that lists the rows (a raw session).
 */
export async function serversReady(
  source: Client | (() => Promise<ServerRow[]>),
  options: { state?: string; only?: readonly string[]; ms?: number } = {},
): Promise<ServerRow[]> {
  const list = typeof source === "function" ? source : () => listServers(source);
  let last: ServerRow[] = [];
  const done = (s: ServerRow) => options.state ? s.state === options.state : s.state !== "connecting";
  try {
    return await until(`servers ${options.state ?? "past connecting"}`, async () => {
      last = await list();
      const watched = options.only ? last.filter((s) => options.only!.includes(s.name)) : last;
      if (options.only && watched.length !== options.only.length) return undefined;
      return watched.every(done) ? last : undefined;
    }, options.ms);
  } catch (error) {
    const states = last.map((s) => `${s.name}: ${s.state}${s.error ? ` (${s.error})` : ""}`).join("; ");
    throw new Error(`${(error as Error).message}; last seen: ${states || "no servers"}`);
  }
}

/** Structured content of a meta-tool result. */
export function structured<T = Record<string, unknown>>(result: unknown): T {
  return (result as { structuredContent: T }).structuredContent;
}

/** A free loopback port (a listener on port 0, closed again). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The TCP ports process `pid` listens on (Linux /proc: its socket inodes in the LISTEN rows of net/tcp*). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      const m = Deno.readLinkSync(`/proc/${pid}/fd/${fd.name}`).match(/^socket:\[(\d+)\]$/);
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    const rows = Deno.readTextFileSync(`/proc/${pid}/net/${table}`).trim().split("\n").slice(1);
    for (const row of rows) {
      const cols = row.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is the 10th column.
      if (cols[3] === "0A" && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(":")[1]!, 16));
    }
  }
  return [...ports];
}

/**
 * Starts server-everything in a remote transport mode on a loopback port and resolves once it listens. It
 * takes its port from PORT and prints PORT back, so with PORT=0 (the default here: the kernel picks a port
 * no other process holds, no free-port guess that can be taken before the bind) its line says "port 0" and
 * the port it got is read from /proc. A `port` given by the test is used as it is (EADDRINUSE then fails
 * the start, naming the port).
 */
export async function startRemote(
  mode: "streamableHttp" | "sse",
  port = 0,
): Promise<{ port: number } & AsyncDisposable> {
  const child = new Deno.Command("node", {
    args: [REAL.everything, mode],
    env: { ...Deno.env.toObject(), PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // It announces the port on stdout or stderr ("… listening on port N", "… running on port N"), from its
  // listen callback: that line is the event we wait for; an exit first is a failure (EADDRINUSE among them).
  const listening = Promise.withResolvers<boolean>();
  let text = "";
  const announced = new RegExp(`(listening|running) on port ${port}\\b`);
  const watch = async (stream: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      text += dec.decode(chunk, { stream: true });
      if (announced.test(text)) listening.resolve(true);
    }
  };
  const drained = Promise.all([watch(child.stdout), watch(child.stderr)]);
  const status = child.status.then(async (s) => {
    await drained;
    listening.resolve(false);
    return s;
  });
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // it exited already
    }
    await status;
  };
  if (!(await listening.promise)) {
    const s = await status;
    throw new Error(
      `server-everything (${mode}) exited (code ${s.code}) before listening on port ${port}: ${
        text.trim().slice(-1000)
      }`,
    );
  }
  const bound = port || listeningPorts(child.pid)[0];
  if (!bound) {
    await stop();
    throw new Error(
      `server-everything (${mode}) said it listens, but /proc/${child.pid} shows no listening port`,
    );
  }
  return { port: bound, [Symbol.asyncDispose]: stop };
}

/**
 * Starts the fixture server on Streamable HTTP (`--http`, with `args` besides); resolves with its port once it
 * listens (the line it prints is the event waited for).
 */
export function startFixtureHttp(args: string[] = []): Promise<{ port: number } & AsyncDisposable> {
  return startHttpServer(FIXTURE, ["--http", ...args], { what: "the fixture" });
}

/** A config with one server, `big`: the hostile fixture listing `tools` tools (`--mode many`). */
export function manyToolsConfig(tools: number): Config {
  const args = [
    "run",
    "-A",
    `${ROOT}tests/fixtures/hostile_server.ts`,
    "--mode",
    "many",
    "--count",
    String(tools),
  ];
  const yaml = `servers:\n  big:\n    command: ${DENO}\n    args: ${JSON.stringify(args)}\n`;
  return parseConfig(yaml, "/tmp/mcphub.yaml", { env: { get: () => undefined }, cwd: "/tmp" });
}

/** A gateway process driven by hand over raw pipes. */
export class RawGateway {
  child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #buffer = "";
  #lines: string[] = [];
  #waiters: (() => void)[] = [];
  stdoutDone: Promise<void>;
  stderr = "";

  constructor(config: string, db: string, flags: string[]) {
    // A sandboxed environment (see Sandbox), removed once the gateway has exited.
    const box = sandboxSync();
    const child = new Deno.Command(DENO, {
      args: [
        "run",
        "--no-prompt",
        ...flags,
        `${ROOT}main.ts`,
        "--config",
        config,
        "--db",
        db,
        "mcp",
        "serve",
      ],
      env: box.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    child.status.finally(() => box[Symbol.asyncDispose]());
    this.child = child;
    this.#writer = child.stdin.getWriter();
    this.stdoutDone = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of child.stdout) {
        this.#buffer += dec.decode(chunk, { stream: true });
        let at;
        while ((at = this.#buffer.indexOf("\n")) !== -1) {
          this.#lines.push(this.#buffer.slice(0, at));
          this.#buffer = this.#buffer.slice(at + 1);
          this.#waiters.splice(0).forEach((w) => w());
        }
      }
      this.#waiters.splice(0).forEach((w) => w());
    })();
    (async () => {
      const dec = new TextDecoder();
      for await (const chunk of child.stderr) this.stderr += dec.decode(chunk);
    })();
  }

  /**
   * Starts `mcp serve` on `config` with the store `db`, under exactly the permissions `mcphub permissions`
   * derives for the config (see {@linkcode gatewayFlags}).
   */
  static async start(config: string, db: string): Promise<RawGateway> {
    return new RawGateway(config, db, await gatewayFlags(config, db));
  }

  /**
   * The MCP handshake (`initialize`, id 1, then `initialized`), then waits until every server is connected
   * (`list_servers` polled with ids from 1,000,000 up, clear of a test's own; the gateway's stderr is in
   * the error at the deadline).
   */
  async handshake(): Promise<void> {
    await this.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const init = await this.response(1);
    if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
    await this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const list = async () => {
      const id = this.#listId++;
      await this.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "list_servers", arguments: {} },
      });
      const r = await this.response(id) as { result: { structuredContent: { servers: ServerRow[] } } };
      return r.result.structuredContent.servers;
    };
    await serversReady(list, { state: "connected" }).catch((error) => {
      throw new Error(`${error.message}\n${this.stderr}`);
    });
  }

  #listId = 1_000_000;

  /** Every line written to stdout so far. */
  get lines(): string[] {
    return this.#lines;
  }

  /** Trailing bytes after the last newline (must be empty at the end). */
  get rest(): string {
    return this.#buffer;
  }

  /** Writes bytes as they are (a message in pieces). */
  async write(bytes: Uint8Array): Promise<void> {
    await this.#writer.write(bytes);
  }

  async send(message: unknown): Promise<void> {
    await this.#writer.write(
      new TextEncoder().encode((typeof message === "string" ? message : JSON.stringify(message)) + "\n"),
    );
  }

  /** Waits for the response with this id. */
  async response(id: number | string | null): Promise<Record<string, unknown>> {
    for (;;) {
      for (const line of this.#lines) {
        const m = JSON.parse(line);
        if (m.id === id && ("result" in m || "error" in m)) return m;
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async closeStdin(): Promise<void> {
    await this.#writer.close();
  }
}

/** The parts' bytes, one after another, in one new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
}

/**
 * A raw JSON-RPC session over a process's pipes, past the MCP handshake: what it reads is exactly what
 * the process wrote, one line per message. `send` writes a message; `answer(id)` is the line that answers
 * `id`, as text (lines before it are skipped); `request` does both with ids of its own (1, 2, …: the
 * handshake's `initialize` is 1).
 */
export async function rawSession(
  command: string,
  args: string[],
  env?: Record<string, string>,
  options: { handshake?: boolean } = {},
) {
  const child = new Deno.Command(command, {
    args,
    env,
    clearEnv: env !== undefined,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let nextId = 1;
  /** Every line read so far, in order (the ones `answer` skipped too). */
  const lines: string[] = [];
  const send = (message: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const answer = async (id: number): Promise<string> => {
    for (;;) {
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        if (JSON.parse(line).id === id) return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`the process closed before answering ${id}`);
      buffer += value;
    }
  };
  const request = async (method: string, params: Record<string, unknown>) => {
    const id = nextId++;
    await send({ jsonrpc: "2.0", id, method, params });
    return await answer(id);
  };
  const close = async () => {
    await writer.close().catch(() => {});
    await reader.cancel().catch(() => {});
    await child.status;
  };
  if (options.handshake === false) {
    return { send, answer, request, lines, close, [Symbol.asyncDispose]: close };
  }
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { send, answer, request, lines, close, [Symbol.asyncDispose]: close };
}

/**
 * A {@linkcode rawSession} with `mcp serve` on `config` and the store `db` (all permissions), sandboxed;
 * `handshake: false` leaves out the 2025 `initialize` (a 2026-07-28 host sends none).
 */
export async function rawGatewaySession(
  config: string,
  db: string,
  options: { handshake?: boolean } = {},
): ReturnType<typeof rawSession> {
  const box = sandboxSync();
  const args = ["run", "-A", `${ROOT}main.ts`, "--config", config, "--db", db, "mcp", "serve"];
  const session = await rawSession(DENO, args, box.env, options).catch(async (e) => {
    await box[Symbol.asyncDispose]();
    throw e;
  });
  const close = async () => {
    await session.close();
    await box[Symbol.asyncDispose]();
  };
  return { ...session, close, [Symbol.asyncDispose]: close };
}

/** A stored result read whole through `get_result` (utf8 pages from cursor 0 to the last). */
export async function pageAll(client: Client, callId: string): Promise<string> {
  type Page = { text: string; nextCursor: number | null; done: boolean };
  let text = "";
  let cursor: number | null = 0;
  while (cursor !== null) {
    const page: Page = structured<Page>(
      await client.callTool({ name: "get_result", arguments: { callId, cursor, encoding: "utf8" } }),
    );
    text += page.text;
    cursor = page.done ? null : page.nextCursor;
  }
  return text;
}
