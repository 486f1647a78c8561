/**
 * Relay bounds (issue 41): a server's requests to the host (sampling, elicitation, roots) are bounded
 * per server in flight and per time window; the excess is refused to the server with an error (and
 * logged once), never relayed.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectGateway, DENO, FIXTURE, q, tempDir, writeConfig } from "../helpers.ts";
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
