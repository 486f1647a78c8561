/**
 * The conformance suite's server scenarios (@modelcontextprotocol/conformance, pinned in
 * tests/servers/package.json) against `mcp serve --listen 127.0.0.1:PORT` fronting our conformance
 * fixture over stdio, and against the fixture served directly over HTTP (the baseline). The suite's
 * clients bind every interface, so each run is inside a private network namespace with only loopback
 * up (`unshare -n`).
 *
 * Asserts the exact per-scenario results on both sides, so a regression and a newly passing scenario
 * both show, and prints the score of each.
 */
import assert from "node:assert/strict";
import { assertPresent, ignoreWithout } from "../_system.ts";
import { namespaceUnavailable, run, SUITE } from "../conformance_suite.ts";
import { DENO, gatewayFlags, q, ROOT, tempDir, writeConfig } from "../helpers.ts";

const FIXTURE = `${ROOT}tests/fixtures/conformance_server.ts`;

/**
 * Scenarios that fail through the gateway, and why (none: with `namespace: false` the fixture's tools,
 * prompts and resource URIs keep their names, and everything else is relayed). A scenario added here
 * must say why it cannot pass.
 */
const GATEWAY_FAILURES: Record<string, string> = {};

/**
 * Inside a fresh network namespace: starts `$@` (a server that prints its URL on stderr as
 * `listening on …`), waits for the line, runs the suite's server mode against it, stops the server.
 */
const SCRIPT = `
ip link set lo up
"$@" 2> server.log &
server=$!
i=0
while ! grep -q "listening on" server.log; do
  i=$((i + 1)); [ $i -gt 300 ] && { cat server.log; kill $server; exit 97; }
  sleep 0.1
done
url=$(sed -n 's/.*listening on \\(http:[^ ]*\\).*/\\1/p; s/^listening on \\([0-9]*\\)$/http:\\/\\/127.0.0.1:\\1\\/mcp/p' server.log | head -n 1)
"$DENO" run -A "$SUITE" server --url "$url"
code=$?
kill -TERM $server
wait $server
exit $code
`;

/** Per scenario: passed (every check) or not, from the suite's summary lines. */
function scores(text: string): Record<string, { passed: number; failed: number }> {
  const out: Record<string, { passed: number; failed: number }> = {};
  for (const m of text.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gm)) {
    out[m[1]] = { passed: Number(m[2]), failed: Number(m[3]) };
  }
  return out;
}

const SKIP = await namespaceUnavailable();
const WHAT = "conformance server scenarios";

Deno.test({
  name: "conformance suite, server scenarios: through mcp serve --listen vs the fixture directly",
  ignore: ignoreWithout(WHAT, SKIP),
  async fn() {
    assertPresent(WHAT, SKIP);
    await using dir = await tempDir("mcphub-conformance-");
    const env = { ...Deno.env.toObject(), DENO, SUITE };
    const inNamespace = async (cwd: string, command: string[]) =>
      await run("unshare", ["-n", "sh", "-c", SCRIPT, "sh", ...command], { cwd, env });

    await Deno.mkdir(`${dir.path}/direct`);
    const direct = await inNamespace(`${dir.path}/direct`, [DENO, "run", "-A", FIXTURE, "--http", "0"]);
    const directScores = scores(direct.text);
    const scenarios = Object.keys(directScores);
    assert.ok(scenarios.length >= 30, `suite output:\n${direct.text.slice(-3000)}`);

    await Deno.mkdir(`${dir.path}/gateway`);
    const path = await writeConfig(
      `${dir.path}/gateway`,
      // namespace: false: the suite calls the fixture's tools, prompts and URIs by their own names.
      `servers:\n  conf:\n    command: ${q(DENO)}\n    args: [run, -A, ${
        q(FIXTURE)
      }]\n    namespace: false\n`,
    );
    const db = `${dir.path}/gateway/mcphub.db`;
    const flags = await gatewayFlags(path, db, { listen: "127.0.0.1:0" });
    const gateway = await inNamespace(`${dir.path}/gateway`, [
      DENO,
      "run",
      "--no-prompt",
      ...flags,
      `${ROOT}main.ts`,
      "--config",
      path,
      "--db",
      db,
      "mcp",
      "serve",
      "--listen",
      "127.0.0.1:0",
    ]);
    const gatewayScores = scores(gateway.text);

    const passing = (s: Record<string, { passed: number; failed: number }>, name: string) =>
      s[name] !== undefined && s[name].failed === 0 && s[name].passed > 0;
    console.log("scenario: direct / through the gateway");
    for (const name of scenarios) {
      const d = directScores[name];
      const g = gatewayScores[name];
      console.log(
        `  ${name}: ${d.passed}/${d.passed + d.failed} / ${
          g ? `${g.passed}/${g.passed + g.failed}` : "no result"
        }${GATEWAY_FAILURES[name] ? ` (${GATEWAY_FAILURES[name]})` : ""}`,
      );
    }
    const directPassed = scenarios.filter((n) => passing(directScores, n));
    const gatewayPassed = scenarios.filter((n) => passing(gatewayScores, n));
    console.log(
      `conformance server score: fixture directly ${directPassed.length}/${scenarios.length}, through the ` +
        `gateway ${gatewayPassed.length}/${scenarios.length} scenarios`,
    );
    assert.equal(direct.code, 0, direct.text.slice(-3000));
    assert.deepEqual(directPassed, scenarios);
    assert.deepEqual(Object.keys(gatewayScores), scenarios, gateway.text.slice(-3000));
    assert.deepEqual(gatewayPassed, scenarios.filter((n) => !(n in GATEWAY_FAILURES)));
  },
});
