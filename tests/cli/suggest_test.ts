import assert from "node:assert/strict";
import { runCliHere } from "../helpers.ts";
import { editDistance, suggest } from "../../src/cli/suggest.ts";

async function cli(...args: string[]) {
  const { code, out, err } = await runCliHere(args, { cwd: Deno.cwd() });
  return { code, out, err, first: err.split("\n")[0] };
}

Deno.test("editDistance() counts a swapped pair of letters as one edit", () => {
  assert.equal(editDistance("lsit", "list"), 1);
  assert.equal(editDistance("serch", "search"), 1);
  assert.equal(editDistance("--confg", "--config"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(suggest("frobnicate", ["list", "search"]), undefined);
  assert.equal(suggest("desc", ["describe", "disable"]), "describe");
});

Deno.test("a mistyped command gets a did-you-mean and exits 2 with the command list", async (t) => {
  const cases: [string[], string][] = [
    [["lsit"], 'error: unknown command "lsit"; did you mean `list`?'],
    [["serch", "x"], 'error: unknown command "serch"; did you mean `search`?'],
    [["descibe", "a__b"], 'error: unknown command "descibe"; did you mean `describe`?'],
    [["stat"], 'error: unknown command "stat"; did you mean `stats`?'],
    [["mcp", "srve"], 'error: unknown command "mcp srve"; did you mean `mcp serve`?'],
    [["mcp"], 'error: unknown command "mcp"; did you mean `mcp serve`?'],
    [["help", "lsit"], 'error: unknown command "lsit"; did you mean `list`?'],
    [["frobnicate"], 'error: unknown command "frobnicate"'],
  ];
  for (const [args, first] of cases) {
    await t.step(args.join(" "), async () => {
      const r = await cli(...args);
      assert.equal(r.code, 2);
      assert.equal(r.first, first);
      assert.equal(r.out, "");
      assert.match(r.err, /^Commands:$/m);
    });
  }
});

Deno.test("a mistyped flag gets a did-you-mean, before or after the command, and exits 2", async (t) => {
  const cases: [string[], string, RegExp][] = [
    [
      ["--confg", "x.yaml", "list"],
      'error: unknown option "--confg"; did you mean --config?',
      /^Commands:$/m,
    ],
    [["--confg=x.yaml", "list"], 'error: unknown option "--confg"; did you mean --config?', /^Commands:$/m],
    [
      ["list", "--confg", "x.yaml"],
      "error: Unknown option '--confg'; did you mean --config?",
      /^Usage: mcphub list/m,
    ],
    [["list", "--jsno"], "error: Unknown option '--jsno'; did you mean --json?", /^Usage: mcphub list/m],
    [
      ["search", "--mx", "3", "q"],
      "error: Unknown option '--mx'; did you mean --max?",
      /^Usage: mcphub search/m,
    ],
    [
      ["stats", "--sinse", "7d"],
      "error: Unknown option '--sinse'; did you mean --since?; stats accepts --tools, --recent N, --since D, --server S, --agent NAME, --markdown, --json, --html FILE",
      /^Usage: mcphub stats/m,
    ],
    [["list", "--zzzzzz"], "error: Unknown option '--zzzzzz'", /^Usage: mcphub list/m],
  ];
  for (const [args, first, help] of cases) {
    await t.step(args.join(" "), async () => {
      const r = await cli(...args);
      assert.equal(r.code, 2);
      assert.equal(r.first, first);
      assert.match(r.err, help);
    });
  }
});

Deno.test("help mcp and mcp --help print the help of mcp serve and mcp connect", async () => {
  const serve = await cli("help", "mcp", "serve");
  assert.equal(serve.code, 0);
  assert.match(serve.out, /^Usage: mcphub mcp serve/);
  const connect = await cli("help", "mcp", "connect");
  assert.equal(connect.code, 0);
  assert.match(connect.out, /^Usage: mcphub mcp connect URL/);
  for (const args of [["help", "mcp"], ["mcp", "--help"]]) {
    const r = await cli(...args);
    assert.equal(r.code, 0, args.join(" "));
    assert.equal(r.out, `${serve.out}\n${connect.out}`);
    assert.equal(r.err, "");
  }
});
