import assert from "node:assert/strict";
import {
  buildCatalog,
  CatalogIndex,
  planNames,
  PUBLIC_NAME_PATTERN,
  splitReference,
} from "../../src/catalog/mod.ts";

const names = (server: string, tools: string[]) =>
  Object.fromEntries(planNames(server, tools).map((p) => [p.downstream, p.namespaced]));

Deno.test("planNames() strips a server_ or server- self-prefix unless that collides", () => {
  assert.deepEqual(names("github", ["github_search", "github-issues", "list", "githubber"]), {
    "github-issues": "github__issues",
    github_search: "github__search",
    githubber: "github__githubber",
    list: "github__list",
  });
  // `search` exists too: stripping github_search would shadow it, so the full name is kept.
  assert.deepEqual(names("github", ["github_search", "search"]), {
    github_search: "github__github_search",
    search: "github__search",
  });
});

Deno.test("planNames() is deterministic whatever order the server lists its tools in", () => {
  const tools = ["b_x", "a", "b-x", "x", "b_y", "y"];
  const once = planNames("b", tools);
  for (let i = 0; i < 10; i++) {
    const shuffled = [...tools].sort(() => Math.random() - 0.5);
    assert.deepEqual(planNames("b", shuffled), once);
  }
  assert.deepEqual(new Set(once.map((p) => p.namespaced)).size, tools.length, "no two tools share a name");
});

Deno.test("planNames() clamps over-long and invalid names to ^[A-Za-z0-9_-]{1,64}$ with a stable hash", () => {
  const long = "a_really_long_tool_name_that_goes_on_and_on_well_past_the_host_limit_of_sixty_four";
  const plans = planNames("server", [long, `${long}_2`, "dotted.name", "dotted_name", "ünï"]);
  for (const p of plans) assert.match(p.namespaced, PUBLIC_NAME_PATTERN, p.namespaced);
  assert.equal(new Set(plans.map((p) => p.namespaced)).size, plans.length);
  const byName = Object.fromEntries(plans.map((p) => [p.downstream, p.namespaced]));
  assert.equal(byName[long]!.length, 64);
  assert.match(byName[long]!, /^server__a_really_long.*_[0-9a-f]{8}$/);
  assert.equal(byName["dotted_name"], "server__dotted_name");
  assert.match(byName["dotted.name"]!, /^server__dotted_name_[0-9a-f]{8}$/);
  // Stable across runs.
  assert.deepEqual(planNames("server", [long]), planNames("server", [long]));
});

Deno.test("splitReference() and CatalogIndex.find() accept every name form", () => {
  assert.deepEqual(splitReference({ tool: "fs__read" }), { server: "fs", tool: "read" });
  assert.deepEqual(splitReference({ server: "fs", tool: "fs__read" }), { server: "fs", tool: "read" });
  assert.deepEqual(splitReference({ server: "fs", tool: "read" }), { server: "fs", tool: "read" });
  assert.deepEqual(splitReference({ tool: "read" }), { tool: "read" });
  const catalog = buildCatalog([{ name: "fs", tools: [{ name: "fs_read" }, { name: "write" }] }]);
  const index = new CatalogIndex(catalog);
  for (
    const ref of [
      { tool: "fs__read" },
      { tool: "fs__fs_read" },
      { server: "fs", tool: "read" },
      { server: "fs", tool: "fs_read" },
      { server: "fs", tool: "fs__read" },
    ]
  ) assert.equal(index.find(ref)?.namespaced, "fs__read", JSON.stringify(ref));
  assert.equal(index.find({ tool: "read" }), undefined);
  assert.equal(index.find({ server: "other", tool: "read" }), undefined);
  assert.deepEqual(index.closest("fs__wirte"), ["fs__write"]);
});

Deno.test("planNames() over more names than one step: the default sort's order, self-prefixes planned alike", () => {
  const names = Array.from({ length: 3_000 }, (_, i) => [`gh_t${i}`, `T${i}`, `é${i}`, `t${i}`][i % 4]!);
  names.push("gh_t1", "t1"); // a self-prefixed name whose stripped form is taken
  const plans = planNames("gh", names);
  assert.deepEqual(plans.map((p) => p.downstream), [...new Set(names)].sort());
  assert.equal(plans.find((p) => p.downstream === "gh_t1")!.short, "gh_t1");
  assert.equal(plans.find((p) => p.downstream === "gh_t4")!.short, "t4");
  assert.equal(new Set(plans.map((p) => p.namespaced)).size, plans.length);
});
