/** Who may read `GET /metrics` when no `metrics_token:` is set, and a `metrics_token:` that cannot be read. */
import assert from "node:assert/strict";
import { tempDir, writeConfig } from "../helpers.ts";
import { startListener } from "../http/http_helpers.ts";

Deno.test("without metrics_token, /metrics is open where the listener needs no token and refused where it does", async () => {
  await using dir = await tempDir();
  {
    const open = await writeConfig(dir.path, "servers: {}\n", "open.yaml");
    await using listener = await startListener(open);
    const response = await fetch(`${listener.origin}/metrics`);
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.match(text, /^# TYPE mcp_server_operation_duration_seconds histogram$/m);
    assert.match(text, /^mcphub_sessions_open 0$/m);
    const post = await fetch(`${listener.origin}/metrics`, { method: "POST" });
    await post.body?.cancel();
    assert.equal(post.status, 405);
  }
  {
    const guarded = await writeConfig(
      dir.path,
      "agents:\n  ci:\n    token: ${MCPHUB_TEST_CI_TOKEN}\nservers: {}\n",
      "guarded.yaml",
    );
    await using listener = await startListener(guarded, {
      env: { MCPHUB_TEST_CI_TOKEN: "ci-token-0123456789abcdef" },
    });
    const response = await fetch(`${listener.origin}/metrics`, {
      headers: { authorization: "Bearer ci-token-0123456789abcdef" },
    });
    assert.equal(response.status, 401);
    assert.match(await response.text(), /set metrics_token: in mcphub\.yaml to scrape \/metrics/);
  }
});

Deno.test("a metrics_token whose variable is unset stops the listener with the file, key and fix", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, "metrics_token: ${MCPHUB_TEST_UNSET_METRICS}\nservers: {}\n");
  await assert.rejects(
    startListener(config),
    /mcphub\.yaml: metrics_token: environment variable MCPHUB_TEST_UNSET_METRICS is not set; set it before starting mcphub, or write the token's hash as "sha256:HEX"/,
  );
});
