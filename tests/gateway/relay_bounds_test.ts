/**
 * Relay bounds (issue 41): a server's requests to the host (sampling, elicitation, roots) are bounded
 * per server in flight and per time window; the excess is refused to the server with an error (and
 * logged once), never relayed.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectGateway, DENO, FIXTURE, q, stderrMatches, tempDir, writeConfig } from "../helpers.ts";
import { RELAY_IN_FLIGHT, RELAY_PER_WINDOW } from "../../src/gateway/mod.ts";

Deno.test("300 sampling requests from one call: at most RELAY_IN_FLIGHT reach the host at once, RELAY_PER_WINDOW in all; the rest refused", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
  const client = new Client({ name: "host", version: "1.0.0" }, { capabilities: { sampling: {} } });
  let open = 0;
  let most = 0;
  let asked = 0;
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked++;
    most = Math.max(most, ++open);
    // Answered a moment later, so the server's requests overlap.
    await new Promise((r) => setTimeout(r, 5));
    open--;
    return { model: "m", role: "assistant" as const, content: { type: "text" as const, text: "ok" } };
  });
  await using gw = await connectGateway(config, { client });
  const result = await client.callTool({ name: "fx__sample_many", arguments: { n: 300 } });
  const outcome = JSON.parse((result.content as { text: string }[])[0].text);
  assert.ok(most <= RELAY_IN_FLIGHT, `${most} requests were at the host at once`);
  assert.ok(asked <= RELAY_PER_WINDOW, `${asked} requests reached the host`);
  assert.equal(outcome.answered, asked);
  assert.equal(outcome.answered + outcome.refused, 300);
  assert.match(outcome.first, /sampling\/createMessage refused: server "fx" has/);
  // Logged once for the burst, not once per request.
  const lines = gw.stderr().split("\n").filter((line) => line.includes("refused"));
  assert.ok(lines.length >= 1 && lines.length <= 3, lines.join("\n"));
});

function fixtureConfig(dir: string, limits: string): Promise<string> {
  return writeConfig(
    dir,
    `listen_limits:\n${limits}servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
  );
}

Deno.test("listen_limits.relay_requests and relay_window set the per-window bound; the refusal names the key", async () => {
  await using dir = await tempDir();
  const config = await fixtureConfig(
    dir.path,
    "  relay_in_flight: 64\n  relay_requests: 10\n  relay_window: 10m\n",
  );
  const client = new Client({ name: "host", version: "1.0.0" }, { capabilities: { sampling: {} } });
  let asked = 0;
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    asked++;
    return { model: "m", role: "assistant" as const, content: { type: "text" as const, text: "ok" } };
  });
  await using gw = await connectGateway(config, { client });
  const result = await client.callTool({ name: "fx__sample_many", arguments: { n: 40 } });
  const outcome = JSON.parse((result.content as { text: string }[])[0].text);
  assert.equal(asked, 10);
  assert.equal(outcome.answered, 10);
  assert.equal(outcome.refused, 30);
  assert.match(
    outcome.first,
    /sampling\/createMessage refused: server "fx" has sent 10 requests to the host in 600s, the most relayed \(listen_limits\.relay_requests: 10 per relay_window\)/,
  );
  // Logged on stderr, a pipe of its own: awaited, not assumed there once the call answered.
  await stderrMatches(gw, /server "fx": requests to the host refused: .*listen_limits\.relay_requests: 10/);
});

Deno.test("listen_limits.relay_in_flight sets how many of a server's requests are at the host at once", async () => {
  await using dir = await tempDir();
  const config = await fixtureConfig(dir.path, "  relay_in_flight: 2\n  relay_requests: 1000\n");
  const client = new Client({ name: "host", version: "1.0.0" }, { capabilities: { sampling: {} } });
  let open = 0;
  let most = 0;
  // Every request is held at the host until two are there and the gateway has refused one (it logs the first
  // refusal; its log can arrive before the second request does).
  const refused = Promise.withResolvers<void>();
  const two = Promise.withResolvers<void>();
  const release = Promise.all([refused.promise, two.promise]);
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    most = Math.max(most, ++open);
    if (open === 2) two.resolve();
    await release;
    open--;
    return { model: "m", role: "assistant" as const, content: { type: "text" as const, text: "ok" } };
  });
  await using gw = await connectGateway(config, { client });
  let log = "";
  gw.transport.stderr?.on("data", (chunk: Uint8Array) => {
    log += new TextDecoder().decode(chunk);
    if (log.includes("requests to the host refused")) refused.resolve();
  });
  const result = await client.callTool({ name: "fx__sample_many", arguments: { n: 40 } });
  const outcome = JSON.parse((result.content as { text: string }[])[0].text);
  assert.equal(most, 2);
  assert.ok(outcome.refused >= 1, JSON.stringify(outcome));
  assert.equal(outcome.answered + outcome.refused, 40);
  assert.match(
    outcome.first,
    /sampling\/createMessage refused: server "fx" has 2 requests to the host in flight, the most relayed at once \(listen_limits\.relay_in_flight: 2\)/,
  );
});
