import assert from "node:assert/strict";
import { DENO, FIXTURE, q, ROOT, tempDir, writeConfig } from "../helpers.ts";

async function mcphub(args: string[]) {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}main.ts`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("mcphub search and describe answer what the meta-tools answer", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  const s = await mcphub(["--config", config, "search", "echo some text"]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /^TOOL\s+SCORE\s+DESCRIPTION\nfx__echo\s+\d+\.\d\d\s+Echoes text\./);
  const j = await mcphub(["--config", config, "--json", "search", "echo some text"]);
  const json = JSON.parse(j.stdout);
  assert.equal(json.matches[0].namespaced, "fx__echo");
  assert.equal(json.contract_version, "1");
  const d = await mcphub(["--config", config, "describe", "fx__big"]);
  assert.equal(d.code, 0, d.stderr);
  const described = JSON.parse(d.stdout);
  assert.equal(described.namespaced, "fx__big");
  assert.deepEqual(described.input_schema.required, ["bytes"]);
  const u = await mcphub(["--config", config, "describe", "fx__bigg"]);
  assert.equal(u.code, 1);
  assert.equal(
    u.stderr,
    'error: Unknown tool "fx__bigg". Did you mean "fx__big"? Call search_tools to find tools.\n',
  );
  const none = await mcphub(["--config", config, "describe"]);
  assert.equal(none.code, 2);
});
