/**
 * `GET /` on the listener: the live stats page, opened in real headless Chromium (installed by
 * tests/intelligence/chromium.ts when missing; skipped with the reason printed only where it cannot
 * be). A browser sends no bearer token, so this listener has no tokens (loopback); the token rules of
 * the page are asserted in listen_test.ts.
 */
import assert from "node:assert/strict";
import { assertPresent, ignoreWithout } from "../_system.ts";
import { chromium, groupEnds, runChromium } from "../intelligence/chromium.ts";
import { q, REAL, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "./http_helpers.ts";

const browser = await chromium();
const missing = "skip" in browser ? browser.skip : undefined;
const ignore = ignoreWithout("the browser tests", missing);

Deno.test({
  name: "the live page in headless Chromium: server states, the calls just made, a reload",
  ignore,
  fn: async () => {
    assertPresent("the browser tests", missing);
    await using dir = await tempDir();
    const path = await writeConfig(
      dir.path,
      `servers:\n  everything:\n    command: node\n    args: [${q(REAL.everything)}, stdio]\n`,
    );
    await using listener = await startListener(path);
    await using client = await httpClient(listener.url);
    for (const message of ["one", "two", "three"]) {
      await client.callTool({ name: "everything__echo", arguments: { message } });
    }
    const { stdout: dom, pgid } = await runChromium((browser as { bin: string }).bin, `${listener.origin}/`, [
      "--dump-dom",
    ]);
    await groupEnds(pgid);

    assert.match(dom, /<title>mcphub: live<\/title>/);
    assert.match(dom, /<meta http-equiv="refresh" content="10">/);
    assert.match(dom, /<section id="servers">/);
    assert.match(dom, /1 of 1 servers connected, as list_servers reports them\./);
    assert.match(dom, /<table id="table-servers">[\s\S]*<code>everything<\/code>[\s\S]*connected/);
    assert.match(dom, /id="total-calls"><div class="value">3<\/div>/);
    for (const id of ["chart-calls", "chart-tokens", "chart-duration"]) {
      assert.match(dom, new RegExp(`<svg id="${id}" class="chart"`), id);
    }
    assert.match(dom, /everything__echo|<code>echo<\/code>/);
    assert.doesNotMatch(dom, /<script/);
    assert.ok(!dom.includes(dir.path), "the store path is not on the page");
  },
});
