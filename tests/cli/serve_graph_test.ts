/**
 * What `mcp serve` loads before it answers `initialize` (issue #16, start-up): the static module graph
 * of its entry, which answers a 2025 host's `initialize` on stdio before the gateway loads (#40,
 * gateway/early.ts), and the gateway's graph, loaded right after (before the first `tools/list` is
 * answered). Timing belongs to the benchmark; this keeps a static import from quietly bringing back what
 * is loaded on demand.
 */
import assert from "node:assert/strict";
import { ROOT } from "../helpers.ts";

interface Dependency {
  code?: { specifier: string };
}
interface ModuleInfo {
  specifier: string;
  kind?: string;
  dependencies?: (Dependency & { isDynamic?: boolean })[];
}

/** The specifiers `entry` reaches through static imports (npm packages are listed, not entered). */
async function staticGraph(entry: string): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: ModuleInfo[];
    redirects?: Record<string, string>;
  };
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...info.roots];
  while (stack.length) {
    let specifier = stack.pop()!;
    specifier = info.redirects?.[specifier] ?? specifier;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    const module = modules.get(specifier);
    if (!module || module.kind === "npm") continue;
    for (const dep of module.dependencies ?? []) {
      if (!dep.isDynamic && dep.code) stack.push(dep.code.specifier);
    }
  }
  return new Set([...seen].map((s) => s.replace(`file://${ROOT}`, "")));
}

Deno.test("main.ts loads only the CLI's entry before it knows the command", async () => {
  const graph = await staticGraph(`${ROOT}main.ts`);
  assert.deepEqual([...graph].sort(), [
    "main.ts",
    "src/cli/command.ts",
    // The one Deno.exit, bounded when OpenTelemetry is on (no imports of its own).
    "src/cli/exit.ts",
    "src/cli/globals.ts",
    "src/cli/run.ts",
    "src/cli/suggest.ts",
    // The JSON guard, installed before anything else (see main.ts).
    "src/json/guard.ts",
    "src/json/install.ts",
    "src/json/safe_json.ts",
  ]);
});

/** `mcp serve`'s entry and the gateway it loads after the early `initialize` answer. */
async function serveGraph(): Promise<string[]> {
  const [entry, gateway] = await Promise.all([
    staticGraph(`${ROOT}src/cli/serve.ts`),
    staticGraph(`${ROOT}src/gateway/mod.ts`),
  ]);
  return [...new Set([...entry, ...gateway])];
}

Deno.test("mcp serve answers a 2025 host's initialize with no SDK, hub, gateway session or downstream loaded", async () => {
  const graph = [...await staticGraph(`${ROOT}src/cli/serve.ts`)];
  const local = graph.filter((s) => s.startsWith("src/"));
  // The early answer (gateway/early.ts, initialize.ts) with the config, the store's path and its cached
  // instructions: the rest of the host side loads after it is written.
  assert.deepEqual(local.filter((s) => s.startsWith("src/gateway/")).sort(), [
    "src/gateway/early.ts",
    "src/gateway/host_input.ts",
    "src/gateway/initialize.ts",
    "src/gateway/light.ts",
  ]);
  assert.deepEqual(local.filter((s) => s.startsWith("src/hub/")), ["src/hub/summary.ts"]);
  assert.deepEqual(local.filter((s) => s.startsWith("src/catalog/")).sort(), [
    "src/catalog/cached_instructions.ts",
    "src/catalog/hashing.ts",
  ]);
  assert.deepEqual(
    local.filter((s) =>
      /^src\/(mcp|downstream|trust|spool|intelligence|resolver|http|telemetry|code|auth)\//.test(s)
    ),
    [],
  );
  assert.deepEqual(local.filter((s) => /^src\/config\/(mod|parse|edit)\.ts$/.test(s)), []);
  // No module of the MCP SDK (v1 or v2), nor zod.
  assert.deepEqual(graph.filter((s) => s.startsWith("npm:")), []);
});

Deno.test("mcp serve loads no resolver, other command, HTTP side, OAuth client or yaml before its first tools/list", async () => {
  const graph = await serveGraph();
  const local = graph.filter((s) => s.startsWith("src/"));
  assert.ok(local.includes("src/gateway/serve.ts") && local.includes("src/config/light.ts"), local.join(" "));
  // The config's text parser and editor load `yaml`; a config in the block-YAML subset is read without it.
  assert.deepEqual(local.filter((s) => /^src\/config\/(mod|parse|edit)\.ts$/.test(s)), []);
  // Of the resolver, only the host of its index worker (the ranking loads in the worker, or on first use).
  assert.deepEqual(local.filter((s) => s.startsWith("src/resolver/")), ["src/resolver/index_host.ts"]);
  assert.deepEqual(local.filter((s) => s.startsWith("src/http/")), []);
  assert.deepEqual(
    local.filter((s) => s.startsWith("src/cli/") && !/\/(serve|command|host|version|progress)\.ts$/.test(s)),
    [],
  );
  assert.deepEqual(
    local.filter((s) =>
      ["src/mcp/sdk_auth.ts", "src/mcp/sdk_http.ts", "src/mcp/sdk_host_http.ts"].includes(s)
    ),
    [],
  );
  // Loaded on their first use: the stats queries and report, get_result's paging, the OAuth login flow
  // and the HTTP downstreams' list screen.
  assert.deepEqual(
    local.filter((s) =>
      /^src\/intelligence\/(query|format|report_data|html|svg)\.ts$/.test(s) ||
      ["src/spool/get_result.ts", "src/auth/login.ts", "src/trust/http_lists.ts"].includes(s)
    ),
    [],
  );
  // node:fs and node:crypto cost ~10 and ~5 ms to load: stdin is compared with stdout by path, hashes wait.
  assert.deepEqual(graph.filter((s) => s === "node:fs" || s === "node:crypto"), []);
  const npm = graph.filter((s) => s.startsWith("npm:"));
  assert.deepEqual(
    npm.filter((s) => /client\/(auth|sse|streamableHttp)|webStandardStreamableHttp|postgres|yaml/.test(s)),
    [],
  );
  // The host's side is HostServer on the v2 client index's Protocol (host_server.ts): that index loads
  // before initialize (with the Ajv it bundles), the one the downstream Client loads anyway. Nothing of v1,
  // not the v2 server index (a second copy of the protocol code), not Ajv's own package.
  assert.deepEqual(
    npm.filter((s) => /@modelcontextprotocol\/sdk@|ajv|@modelcontextprotocol\/server@/.test(s)),
    [],
  );
  assert.ok(npm.some((s) => /@modelcontextprotocol\/client@[^/]+$/.test(s)), npm.join(" "));
  assert.ok(!local.includes("src/mcp/sdk_client.ts"));
  // Telemetry (and the OpenTelemetry API) loads only with OTEL_DENO=true or --listen (telemetry/).
  assert.deepEqual(local.filter((s) => s.startsWith("src/telemetry/")), []);
  assert.deepEqual(npm.filter((s) => s.includes("opentelemetry")), []);
});

Deno.test("mcp serve loads no 2026-07-28 host side, HTTP downstream, stdio client end or code mode before its first tools/list", async () => {
  const local = (await serveGraph()).filter((s) => s.startsWith("src/"));
  // A 2025 host's `initialize` is answered without the 2026-07-28 era's host side (loaded by the first message
  // that needs it, gateway/stdio_server.ts), its HTTP side (with an HTTP downstream), nor the downstream era
  // itself (with the first stdio server: the stdio client end, its list screen and notice gate).
  assert.deepEqual(
    local.filter((s) =>
      /^src\/mcp\/(host_era|host_listen|era|era_http|param_headers|mod)\.ts$/.test(s) ||
      /^src\/downstream\/(stdio|remote|notice_gate)\.ts$/.test(s) ||
      /^src\/trust\/(list_screen|definition_scan|mod)\.ts$/.test(s)
    ),
    [],
  );
  // Code mode (its sandbox, declarations and run_code) loads with the first run_code call: only its names.
  assert.deepEqual(local.filter((s) => s.startsWith("src/code/")), [
    "src/code/light.ts",
    "src/code/names.ts",
  ]);
});
