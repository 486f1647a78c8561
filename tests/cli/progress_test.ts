import assert from "node:assert/strict";
import { DENO, FIXTURE, q, ROOT, runCliHere, sandbox, tempDir, writeConfig } from "../helpers.ts";
import { hasScript } from "./terminal.ts";
import { progressLine } from "../../src/cli/progress.ts";

const CLEAR = "\r\x1b[K";

/** Runs the CLI in this process, in a sandbox (a temp HOME), with stderr reported as a terminal or not. */
async function cli(args: string[], stderrIsTerminal: boolean) {
  await using box = await sandbox();
  return await runCliHere(args, {
    env: box.env,
    stderrIsTerminal,
    onErr: (t, out) => {
      // The progress line is cleared before the command prints its result.
      if (t !== CLEAR && t.startsWith(CLEAR)) assert.equal(out, "", "progress after output");
    },
  });
}

async function twoServers(dir: string): Promise<string> {
  return await writeConfig(
    dir,
    `servers:
  fx:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
  bad:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}, --crash-at-start]
  off:
    command: ${q(DENO)}
    args: [run, -A, ${q(FIXTURE)}]
    enabled: false
`,
  );
}

Deno.test("progressLine() names every enabled server with its state", () => {
  assert.equal(
    progressLine([{ name: "everything", state: "connected" }, { name: "memory", state: "connecting" }], 400),
    "connecting 2 servers… everything ✓ memory …",
  );
  assert.equal(progressLine([{ name: "a", state: "failed" }], 2500), "connecting 1 server (2s)… a ✗");
});

Deno.test("list, search and describe show one rewritten progress line on a terminal, cleared before the output", async (t) => {
  await using dir = await tempDir();
  const config = await twoServers(dir.path);
  const quiet = await cli(["--config", config, "list"], false);
  for (const args of [["list"], ["search", "echo"], ["describe", "fx__echo"]]) {
    await t.step(args[0]!, async () => {
      const r = await cli(["--config", config, ...args], true);
      assert.equal(r.code, 0, r.err);
      // search also notes, after the progress, the servers it could not search.
      const note = "mcphub: not searched: bad (failed); `mcphub list` shows why\n";
      const frames = (args[0] === "search" && r.err.endsWith(note) ? r.err.slice(0, -note.length) : r.err)
        .split(CLEAR);
      assert.equal(frames[0], "");
      assert.equal(frames[1], "connecting 2 servers… fx … bad …");
      assert.match(frames.at(-2)!, /^connecting 2 servers( \(\d+s\))?… fx ✓ bad ✗$/);
      assert.equal(frames.at(-1), "", "the last write clears the line");
      assert.ok(frames.slice(1, -1).every((f) => /^connecting 2 servers/.test(f)), r.err);
      if (args[0] === "list") assert.equal(r.out, quiet.out);
    });
  }
  await t.step("nothing on stderr when it is not a terminal", async () => {
    assert.equal(quiet.code, 0);
    assert.equal(quiet.err, "");
    assert.match(quiet.out, /^SERVER\s+STATE/);
    const s = await cli(["--config", config, "search", "echo"], false);
    assert.equal(s.err, "mcphub: not searched: bad (failed); `mcphub list` shows why\n");
  });
});

Deno.test({
  name: "mcphub list under a real pseudo-terminal shows the progress on stderr; stdout is only the table",
  ignore: !hasScript(),
  async fn() {
    await using dir = await tempDir();
    const config = await twoServers(dir.path);
    const outFile = `${dir.path}/out.txt`;
    // script(1) gives the command a terminal for stdin and stderr; stdout goes to a file.
    const command = `${DENO} run -A ${ROOT}main.ts --config ${config} list > ${outFile}`;
    await using box = await sandbox();
    const r = await new Deno.Command("script", {
      args: ["-qec", command, "/dev/null"],
      env: box.env,
      clearEnv: true,
      stdin: "null",
    }).output();
    const terminal = new TextDecoder().decode(r.stdout);
    assert.equal(r.code, 0, terminal);
    assert.ok(terminal.includes(`${CLEAR}connecting 2 servers… fx … bad …`), terminal);
    assert.ok(terminal.replace(/\r\n$/, "").endsWith(CLEAR), terminal);
    const table = await Deno.readTextFile(outFile);
    assert.match(table, /^SERVER\s+STATE/);
    assert.ok(!table.includes("\x1b"), table);
  },
});
