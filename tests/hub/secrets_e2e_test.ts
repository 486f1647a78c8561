/**
 * No secret leaves through the gateway's own output: a `${VAR}` value that a hostile server prints on
 * stdout (placed to straddle the log cut) and that a failing call carries in its error text never
 * appears, whole or in part, in the gateway's stderr, `mcphub list`, `mcphub stats --json` or the
 * bytes of the store file. Run as users run it: `mcp serve` under its derived permissions, then the CLI.
 */
import assert from "node:assert/strict";
import {
  connectGateway,
  DENO,
  FIXTURE,
  HOSTILE,
  q,
  runMcphub,
  stderrMatches,
  tempDir,
  writeConfig,
} from "../helpers.ts";

const SECRET = "sk-live-0123456789abcdefghijklmnopqrstu";

/** Every 8-character piece of the secret found in `text` (a leak of part of it counts). */
function pieces(text: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + 8 <= SECRET.length; i++) {
    const piece = SECRET.slice(i, i + 8);
    if (text.includes(piece)) found.add(piece);
  }
  return [...found];
}

async function mcphub(args: string[], env: Record<string, string>) {
  const out = await runMcphub(args, { env });
  return { code: out.code, text: out.stdout + out.stderr };
}

Deno.test("a secret printed by a server and carried in a call's error reaches no log, list, stats or store byte", async () => {
  await using dir = await tempDir();
  const path = await writeConfig(
    dir.path,
    `servers:
  bad:
    command: ${q(DENO)}
    args: [run, -A, ${q(HOSTILE)}, --mode, garbage]
    env: { HOSTILE_SECRET: "\${TOKEN}" }
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
    env: { API_TOKEN: "\${TOKEN}" }
`,
  );
  const db = `${dir.path}/mcphub.db`;
  const env = { TOKEN: SECRET };
  {
    await using gw = await connectGateway(path, { db, env });
    // A failing call whose error text holds the secret (as a server echoing its own config would).
    const failed = await gw.client.callTool({
      name: "fx__fail",
      arguments: { text: `denied: token=${SECRET}` },
    });
    assert.equal(failed.isError, true);
    const servers = await gw.client.callTool({ name: "list_servers", arguments: {} });
    assert.deepEqual(pieces(JSON.stringify(servers)), []);
    const stats = await gw.client.callTool({ name: "stats", arguments: {} });
    assert.deepEqual(pieces(JSON.stringify(stats)), []);
    // The garbage line is logged on stderr (a pipe of its own): awaited before the gateway is closed.
    await stderrMatches(gw, /not JSON-RPC/);
    await gw.close();
    // The garbage line was logged (redacted), so the check below is not vacuous.
    assert.match(gw.stderr(), /not JSON-RPC/);
    assert.deepEqual(pieces(gw.stderr()), [], gw.stderr());
  }
  const list = await mcphub(["--config", path, "--db", db, "list"], env);
  assert.equal(list.code, 0, list.text);
  assert.deepEqual(pieces(list.text), [], list.text);
  const stats = await mcphub(["--config", path, "--db", db, "stats", "--json"], env);
  assert.equal(stats.code, 0, stats.text);
  assert.match(stats.text, /"calls": 1\b|"calls":1\b/);
  assert.deepEqual(pieces(stats.text), [], stats.text);
  // Every byte of the store (and its journal, if one is left), as `strings` would show them.
  for await (const entry of Deno.readDir(dir.path)) {
    if (!entry.name.startsWith("mcphub.db")) continue;
    const bytes = await Deno.readFile(`${dir.path}/${entry.name}`);
    assert.deepEqual(pieces(new TextDecoder("latin1").decode(bytes)), [], entry.name);
  }
});
