/**
 * A 2026-07-28 server's `input_required` through the gateway to a 2026-07-28 host on stdio, against the
 * same server directly (tests/fixtures/mrtr_conformance_server.ts, 2026-07-28 only): the host gets the
 * server's own `inputRequests` keys and requests, all of a round at once; its retry with those keys
 * completes the call as directly; the host's capabilities decide what the server asks; responses given up
 * front answer the server; a tampered state is refused.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  DENO,
  q,
  rawGatewaySession,
  rawSession,
  ROOT,
  sandboxSync,
  tempDir,
  writeConfig,
} from "../helpers.ts";

const MRTR = `${ROOT}tests/fixtures/mrtr_conformance_server.ts`;
const envelope = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "raw-modern", version: "1" },
});
const ALL = { elicitation: {}, sampling: {}, roots: {} };
const RESPONSES = {
  user_name: { action: "accept", content: { name: "Ada" } },
  greeting: {
    role: "assistant",
    content: { type: "text", text: "Hello" },
    model: "m",
    stopReason: "endTurn",
  },
  client_roots: { roots: [{ uri: "file:///r", name: "r" }] },
};

/** `value` without `_meta["io.modelcontextprotocol/serverInfo"]` anywhere (an emptied `_meta` dropped). */
function withoutServerInfo(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v) => {
    if (key !== "_meta" || !v || typeof v !== "object") return v;
    const { "io.modelcontextprotocol/serverInfo": _, ...rest } = v as Record<string, unknown>;
    return Object.keys(rest).length ? rest : undefined;
  }));
}

type Host = Awaited<ReturnType<typeof rawSession>>;

/** What `host` answers to a tools/call of `name` (its result or error), `extra` params added. */
async function call(
  host: Host,
  id: number,
  name: string,
  capabilities: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  await host.send({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: {}, ...extra, _meta: envelope(capabilities) },
  });
  return JSON.parse(await host.answer(id)) as { result?: Record<string, unknown>; error?: { code: number } };
}

/** The same exchanges against `host`: what a test compares between direct and through the gateway. */
async function exchanges(host: Host) {
  const out: Record<string, unknown> = {};
  // Three requests in one round, then the retry with every key and the state.
  const round = await call(host, 1, "test_input_required_result_multiple_inputs", ALL);
  const asked = round.result!;
  out.round = { ...asked, requestState: typeof asked.requestState };
  const done = await call(host, 2, "test_input_required_result_multiple_inputs", ALL, {
    inputResponses: RESPONSES,
    requestState: asked.requestState,
  });
  out.done = done.result;
  // The host offers sampling only: the server asks for that alone.
  const sampling = await call(host, 3, "test_input_required_result_capabilities", { sampling: {} });
  out.samplingOnly = Object.values(sampling.result!.inputRequests as Record<string, { method: string }>)
    .map((r) => r.method);
  // Responses given up front (no state): the server's request is answered by them.
  out.upFront = (await call(host, 4, "test_input_required_result_elicitation", ALL, {
    inputResponses: { user_name: RESPONSES.user_name, unknown_extra_key: { action: "accept" } },
  })).result;
  // A tampered state is refused.
  const first = await call(host, 5, "test_input_required_result_tampered_state", ALL);
  out.tampered = (await call(host, 6, "test_input_required_result_tampered_state", ALL, {
    inputResponses: { confirm: { action: "accept", content: { ok: true } } },
    requestState: `${first.result!.requestState}-TAMPERED`,
  })).error?.code;
  return out;
}

Deno.test("a 2026-07-28 server's input_required reaches a 2026-07-28 host through the gateway as directly: its keys, a round at once", async () => {
  await using dir = await tempDir();
  const box = sandboxSync();
  let direct: Record<string, unknown>;
  {
    await using host = await rawSession(DENO, ["run", "-A", MRTR, "--reject"], box.env, { handshake: false });
    direct = await exchanges(host);
  }
  await box[Symbol.asyncDispose]();
  const path = await writeConfig(
    dir.path,
    `servers:\n  mrtr:\n    command: ${q(DENO)}\n    args: [run, -A, ${
      q(MRTR)
    }, --reject]\n    namespace: false\n`,
  );
  let gateway: Record<string, unknown>;
  {
    await using host = await rawGatewaySession(path, `${dir.path}/store.db`, { handshake: false });
    gateway = await exchanges(host);
  }
  // What the server asked, key for key; the retry's answer; the rest.
  assert.deepEqual(Object.keys((direct.round as { inputRequests: object }).inputRequests), [
    "user_name",
    "greeting",
    "client_roots",
  ]);
  assert.deepEqual(direct.samplingOnly, ["sampling/createMessage"]);
  assert.deepEqual((direct.upFront as { content: unknown }).content, [{ type: "text", text: "Hello, Ada!" }]);
  assert.equal((direct.upFront as { resultType: unknown }).resultType, "complete");
  assert.equal(direct.tampered, -32602);
  // The same through the gateway (a result's serverInfo `_meta` is the answering server's own).
  assert.deepEqual(withoutServerInfo(gateway), withoutServerInfo(direct));
});
