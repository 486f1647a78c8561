/** `code_mode:` in mcphub.yaml (top level and per agent), and the permission set it needs. */
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "../../src/config/mod.ts";
import { derivePermissions } from "../../src/cli/permissions.ts";

const OPTIONS = { env: { get: () => undefined }, cwd: "/work", home: "/home/u" };

function parse(text: string) {
  return parseConfig(text, "/work/mcphub.yaml", OPTIONS);
}

const SERVER = "servers:\n  memory:\n    command: node\n    args: [memory.js]\n";

Deno.test("code_mode: off by default, on at the top level or for one agent", () => {
  assert.equal(parse(SERVER).codeMode, false);
  assert.equal(parse(`code_mode: true\n${SERVER}`).codeMode, true);
  const config = parse(`${SERVER}agents:\n  coder:\n    code_mode: true\n  plain:\n    servers: [memory]\n`);
  assert.equal(config.codeMode, false);
  assert.deepEqual(config.agents.map((a) => [a.name, a.codeMode]), [["coder", true], ["plain", undefined]]);
});

Deno.test("code_mode: a value other than true or false names the file, line and key", () => {
  for (
    const [text, expected] of [
      [
        `code_mode: yes please\n${SERVER}`,
        "/work/mcphub.yaml:1:12: code_mode: expected true or false, got a string",
      ],
      [
        `${SERVER}agents:\n  coder:\n    code_mode: 1\n`,
        "/work/mcphub.yaml:7:16: agents.coder.code_mode: expected true or false, got a number",
      ],
    ] as const
  ) {
    assert.throws(() => parse(text), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.ok(error.message.split("\n").includes(expected), error.message);
      return true;
    });
  }
});

Deno.test("derivePermissions() allows the sandbox's program only when code mode is on for the gateway or agent", () => {
  const derive = (text: string, agent?: string) =>
    derivePermissions(parseConfig(text, "/work/mcphub.yaml", { ...OPTIONS, agent }), {
      storePath: "/work/mcphub.db",
      agent,
      cwd: "/work",
      os: "linux",
      which: (command) => command === "node" ? "/usr/bin/node" : undefined,
      execPath: "/opt/deno/bin/deno",
    }).run;
  assert.deepEqual(derive(SERVER), ["/usr/bin/node", "node"]);
  assert.deepEqual(derive(`code_mode: true\n${SERVER}`), ["/opt/deno/bin/deno", "/usr/bin/node", "node"]);
  const agents = `${SERVER}agents:\n  coder:\n    code_mode: true\n  plain: {}\n`;
  assert.deepEqual(derive(agents, "coder"), ["/opt/deno/bin/deno", "/usr/bin/node", "node"]);
  assert.deepEqual(derive(agents, "plain"), ["/usr/bin/node", "node"]);
  // Unscoped (one listener for every agent): on when any agent has it.
  assert.deepEqual(derive(agents), ["/opt/deno/bin/deno", "/usr/bin/node", "node"]);
});

Deno.test("main.ts starts the sandbox on the argument the gateway passes", async () => {
  const { SANDBOX_ARG: main } = await import("../../main.ts");
  const { SANDBOX_ARG: code } = await import("../../src/code/mod.ts");
  assert.equal(main, code);
});
