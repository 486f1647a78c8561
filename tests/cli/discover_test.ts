import assert from "node:assert/strict";
import { DENO, FIXTURE, q, runMcphub, tempDir, writeConfig } from "../helpers.ts";
import { cliWords } from "../../src/cli/cli_words.ts";
import { formatDescribe, typeOf } from "../../src/cli/describe_view.ts";

Deno.test("mcphub search and describe answer what the meta-tools answer", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  const s = await runMcphub(["--config", config, "search", "echo some text"]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /^TOOL\s+SCORE\s+DESCRIPTION\nfx__echo\s+\d+\.\d\d\s+Echoes text\./);
  const j = await runMcphub(["--config", config, "--json", "search", "echo some text"]);
  const json = JSON.parse(j.stdout);
  assert.equal(json.matches[0].namespaced, "fx__echo");
  assert.equal(json.contract_version, "1");
  const d = await runMcphub(["--config", config, "describe", "fx__big", "--json"]);
  assert.equal(d.code, 0, d.stderr);
  const described = JSON.parse(d.stdout);
  assert.equal(described.namespaced, "fx__big");
  assert.deepEqual(described.input_schema.required, ["bytes"]);
  // The readable view: description, then each argument's type, whether it is required, its description.
  const view = await runMcphub(["--config", config, "describe", "fx__big"]);
  assert.equal(view.code, 0, view.stderr);
  assert.equal(
    view.stdout,
    "fx__big  (server fx, tool big)\n\n  Returns a text result of about `bytes` bytes.\n\nArguments:\n" +
      "  NAME   TYPE    REQUIRED  DESCRIPTION\n  bytes  number  required\n  text   string\n\n" +
      "--json prints the full input schema (what describe_tool answers)\n",
  );
  const u = await runMcphub(["--config", config, "describe", "fx__bigg"]);
  assert.equal(u.code, 1);
  assert.equal(
    u.stderr,
    'error: Unknown tool "fx__bigg". Did you mean "fx__big"? Run `mcphub search "fx bigg"` to find tools.\n',
  );
  const none = await runMcphub(["--config", config, "describe"]);
  assert.equal(none.code, 2);
});

Deno.test("cliWords() turns meta-tool advice into CLI commands", () => {
  assert.equal(
    cliWords('describe_tool: Unknown tool "x". Call search_tools to find tools.', "x"),
    'Unknown tool "x". Run `mcphub search "x"` to find tools.',
  );
  assert.equal(
    cliWords('server "a" is failed. Call list_servers for the state of every server.'),
    'server "a" is failed. Run `mcphub list` for the state of every server.',
  );
  assert.equal(cliWords("+3 more; call list_servers"), "+3 more; run `mcphub list`");
  assert.equal(
    cliWords("still connecting: see list_servers, or resolve_tool again", "q"),
    'still connecting: see `mcphub list`, or `mcphub search "q"` again',
  );
  assert.equal(cliWords("use call_tool with get_result"), "use call_tool with get_result");
});

Deno.test("CLI errors name CLI commands: describe of a failed server, search past one", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n` +
      `  bad:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --crash-at-start]\n`,
  );
  const d = await runMcphub(["--config", config, "describe", "bad__echo"]);
  assert.equal(d.code, 1);
  assert.match(
    d.stderr,
    /^error: server "bad" is failed: .*; `mcphub list` shows every server's state\n$/,
  );
  assert.doesNotMatch(d.stderr, /describe_tool|list_servers|search_tools/);
  const z = await runMcphub(["--config", config, "describe", "zz_top"]);
  assert.equal(z.stderr, 'error: Unknown tool "zz_top". Run `mcphub search "zz top"` to find tools.\n');
  const s = await runMcphub(["--config", config, "search", "echo"]);
  assert.equal(s.code, 0);
  assert.equal(s.stderr, "mcphub: not searched: bad (failed); `mcphub list` shows why\n");
  assert.match(s.stdout, /^TOOL\s+SCORE/);
});

Deno.test("formatDescribe(): types, required, defaults and descriptions, one line per argument", () => {
  const text = formatDescribe({
    namespaced: "ev__zip",
    server: "ev",
    downstream: "zip",
    title: "Zip it",
    description: "Compresses a file.",
    input_schema: {
      type: "object",
      properties: {
        path: { type: "string", description: "The file\nto compress" },
        level: { type: "integer", default: 6 },
        mode: { enum: ["fast", "small"] },
        tags: { type: "array", items: { type: "string" } },
        meta: { type: ["object", "null"], properties: {} },
      },
      required: ["path"],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  });
  assert.equal(
    text,
    `ev__zip — Zip it  (server ev, tool zip)

  Compresses a file.

Arguments:
  NAME   TYPE            REQUIRED  DESCRIPTION
  path   string          required  The file to compress
  level  integer                   (default 6)
  mode   "fast"|"small"
  tags   string[]
  meta   object|null

Hints: read-only

--json prints the full input schema (what describe_tool answers)
`,
  );
  assert.equal(typeOf({ anyOf: [{ type: "string" }, { type: "number" }] }), "string|number");
  assert.equal(typeOf({ type: "array", items: { enum: [1, 2] } }), "(1|2)[]");
});
