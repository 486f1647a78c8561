import assert from "node:assert/strict";
import { buildCatalog, type CatalogServer } from "../../src/catalog/mod.ts";
import { canonicalJson, catalogRevision, REVISION_LENGTH } from "../../src/resolver/mod.ts";
import { fixtureServers } from "./_fixture.ts";

function revisionOf(servers: CatalogServer[]): string {
  return catalogRevision(buildCatalog(servers));
}

Deno.test("catalogRevision() is a stable hex digest", () => {
  const a = revisionOf(fixtureServers());
  assert.match(a, new RegExp(`^[0-9a-f]{${REVISION_LENGTH}}$`));
  assert.equal(revisionOf(fixtureServers()), a);
});

Deno.test("catalogRevision() ignores server, tool and key order", () => {
  const servers = fixtureServers();
  const shuffled = servers.reverse().map((s) => ({
    ...s,
    tools: [...s.tools].reverse().map((t) => Object.fromEntries(Object.entries(t).reverse()) as typeof t),
  }));
  assert.equal(revisionOf(shuffled), revisionOf(fixtureServers()));
  const tools = buildCatalog(fixtureServers());
  assert.equal(catalogRevision([...tools].reverse()), catalogRevision(tools));
});

Deno.test("catalogRevision() changes when any ranked field or schema changes", async (t) => {
  const base = revisionOf(fixtureServers());
  const edits: [string, (s: CatalogServer[]) => void][] = [
    ["tool description", (s) => s[0]!.tools[0]!.description += "!"],
    ["tool title", (s) => s[0]!.tools[0]!.title = "Read text"],
    ["input schema", (s) => s[0]!.tools[0]!.inputSchema!.required = []],
    ["server description", (s) => s[0]!.description = "changed"],
    ["server use_when", (s) => s[0]!.useWhen = ["other hint"]],
    ["tool use_when", (s) => s[0]!.toolUseWhen = { read_text_file: ["hint"] }],
    ["tags", (s) => s[1]!.tags = ["other"]],
    ["a removed tool", (s) => s[2]!.tools.pop()],
    ["a renamed server", (s) => s[3]!.name = "clock"],
  ];
  for (const [label, edit] of edits) {
    await t.step(label, () => {
      const servers = fixtureServers();
      edit(servers);
      assert.notEqual(revisionOf(servers), base);
    });
  }
});

Deno.test("canonicalJson() sorts keys at every level and drops undefined", () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: undefined } }),
    '{"a":{"d":[2,{"y":2,"z":1}]},"b":1}',
  );
});
