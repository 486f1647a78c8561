import assert from "node:assert/strict";
import { serverIndex, tool } from "./_bench_catalog.ts";
import { rankQuery, stem } from "../../src/resolver/mod.ts";
import { parseQuery } from "../../src/resolver/query.ts";

// Excerpt of a hosting platform's live `tools/list` (blind12's Render).
const index = serverIndex("render", "MCP server for Render", [
  tool("list_services", "List all services in your Render account"),
  tool("get_service", "Get details of a specific service"),
  tool("create_service", "Create a new service"),
  tool("delete_service", "Delete a service"),
  tool("deploy_service", "Deploy a specific service"),
  tool("manage_env_vars", "Manage environment variables for a service"),
  tool("list_databases", "List all PostgreSQL databases in your Render account"),
]);

const first = (query: string) => rankQuery(index, query).hits[0]?.tool.tool;

Deno.test("a name in capitals joined by underscores is an environment variable's (231)", () => {
  const q = parseQuery("change DATABASE_URL=postgres on the api service");
  const typed = q.terms.filter((t) => !t.expansion).map((t) => t.term);
  assert.ok(typed.includes(stem("env")), typed.join(" "));
  // Its words and the value set name no object of the request.
  assert.equal(typed.includes(stem("database")), false, typed.join(" "));
  assert.equal(typed.includes(stem("postgres")), false, typed.join(" "));
  // Capitals without an underscore ("API", "HOME") are no such name.
  assert.equal(parseQuery("the API service").terms.some((t) => t.term === stem("env")), false);
});

Deno.test("setting NAME=value on a service finds the tool that manages its environment variables (231)", () => {
  assert.equal(
    first("render: put SENTRY_DSN=https://abc@o1.ingest.example/2 and LOG_LEVEL=debug on service srv-77"),
    "manage_env_vars",
  );
  assert.equal(first("set STRIPE_KEY=sk_test_123 on the api service"), "manage_env_vars");
  assert.equal(first("change DATABASE_URL on the api service to the new postgres"), "manage_env_vars");
});
