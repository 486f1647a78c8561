/**
 * Bounded, lossless results through the real gateway: receipts, get_result
 * paging, verbatim comparison, fail-open, and two gateways on one store.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client";
import { connectGateway, q, REAL, serversReady, structured, tempDir, writeConfig } from "../helpers.ts";

const enc = new TextEncoder();

/** A multi-megabyte text with multibyte characters of every UTF-8 length. */
function bigText(bytes: number): string {
  const line = "mcphub ✓ naïve café 東京 🚀 — línea de prueba número ";
  let out = "";
  for (let i = 0; enc.encode(out).length < bytes; i++) out += `${line}${i}\n`.repeat(64);
  return out;
}

function fsConfig(root: string, extra = ""): string {
  return `${extra}servers:
  filesystem:
    command: node
    args: [${q(REAL.filesystem)}, ${q(root)}]
`;
}

async function ready(client: Client): Promise<void> {
  await serversReady(client);
}

/** Pages a stored result from cursor 0 to done; returns the bytes. */
async function pageAll(client: Client, callId: string, encoding?: "utf8"): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let cursor = 0;
  for (let i = 0;; i++) {
    assert.ok(i < 100_000, "paging makes progress");
    const r = await client.callTool({
      name: "get_result",
      arguments: { callId, cursor, ...(encoding ? { encoding } : {}) },
    });
    const page = structured<
      { status: string; data?: string; text?: string; cursor: number; nextCursor: number; done: boolean }
    >(r);
    assert.equal(page.status, "ok");
    assert.equal(page.cursor, cursor);
    parts.push(
      encoding ? enc.encode(page.text!) : Uint8Array.from(atob(page.data!), (c) => c.charCodeAt(0)),
    );
    if (page.done) break;
    assert.ok(page.nextCursor > cursor);
    cursor = page.nextCursor;
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) all.set(p, at), at += p.length;
  return all;
}

Deno.test("an oversized result is spooled: the receipt fits and the pages equal the verbatim result byte for byte", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/files`;
  await Deno.mkdir(root);
  await Deno.writeTextFile(`${root}/big.txt`, bigText(2.5 * 1024 * 1024));
  const args = { path: `${root}/big.txt` };

  const verbatimConfig = await writeConfig(dir.path, fsConfig(root, "verbatim: true\n"), "verbatim.yaml");
  let verbatimJson: string;
  {
    await using gw = await connectGateway(verbatimConfig);
    await ready(gw.client);
    const full = await gw.client.callTool({ name: "filesystem__read_text_file", arguments: args });
    verbatimJson = JSON.stringify(full);
    assert.ok(enc.encode(verbatimJson).length > 2 * 1024 * 1024);
  }

  const config = await writeConfig(dir.path, fsConfig(root, 'response_budget: "32KB"\n'));
  await using gw = await connectGateway(config);
  await ready(gw.client);
  const receipt = await gw.client.callTool({ name: "filesystem__read_text_file", arguments: args });
  assert.ok(enc.encode(JSON.stringify(receipt)).length <= 32 * 1024, "the receipt fits the budget");
  const stored = structured<
    {
      status: string;
      callId: string;
      originalBytes: number;
      budgetBytes: number;
      preview: string;
      namespaced: string;
    }
  >(receipt);
  assert.equal(stored.status, "stored");
  assert.match(stored.callId, /^[0-9a-f]{32}$/);
  assert.equal(stored.originalBytes, enc.encode(verbatimJson).length);
  assert.equal(stored.budgetBytes, 32 * 1024);
  assert.equal(stored.namespaced, "filesystem__read_text_file");
  assert.ok(stored.preview.length > 0 && verbatimJson.includes(JSON.stringify(stored.preview).slice(1, 200)));
  assert.match(
    (receipt.content as { text: string }[])[0]!.text,
    new RegExp(`^Result stored: ${stored.originalBytes} bytes exceeded the 32768-byte response budget\\.`),
  );

  const bytes = await pageAll(gw.client, stored.callId);
  assert.deepEqual(bytes, enc.encode(verbatimJson));
  const text = await pageAll(gw.client, stored.callId, "utf8");
  assert.deepEqual(text, enc.encode(verbatimJson));

  // Past the end, unknown ids and bad cursors.
  const past = structured<{ status: string }>(
    await gw.client.callTool({ name: "get_result", arguments: { callId: stored.callId, cursor: 1e9 } }),
  );
  assert.equal(past.status, "cursor_out_of_range");
  const unknown = structured<{ status: string }>(
    await gw.client.callTool({ name: "get_result", arguments: { callId: "0".repeat(32) } }),
  );
  assert.equal(unknown.status, "unavailable");
  await assert.rejects(
    gw.client.callTool({ name: "get_result", arguments: { callId: stored.callId, cursor: -1 } }),
    (e: Error & { code?: number }) => e.code === -32602,
  );
});

Deno.test("a store that cannot be written: the complete result passes through with one warning", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/files`;
  await Deno.mkdir(root);
  await Deno.writeTextFile(`${root}/big.txt`, bigText(100 * 1024));
  const config = await writeConfig(dir.path, fsConfig(root, 'response_budget: "4KB"\n'));
  // The store's directory is a file: the database can never be opened.
  const blocker = `${dir.path}/not-a-dir`;
  await Deno.writeTextFile(blocker, "");
  await using gw = await connectGateway(config, { db: `${blocker}/mcphub.db` });
  await ready(gw.client);
  const want = await Deno.readTextFile(`${root}/big.txt`);
  for (let i = 0; i < 2; i++) {
    const r = await gw.client.callTool({
      name: "filesystem__read_text_file",
      arguments: { path: `${root}/big.txt` },
    });
    assert.deepEqual(r.content, [{ type: "text", text: want }]);
  }
  assert.equal(gw.stderr().match(/warning: /g)?.length, 1, gw.stderr());
});

Deno.test("a spool write that fails (store locked past the busy timeout): the complete result and one warning", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/files`;
  await Deno.mkdir(root);
  await Deno.writeTextFile(`${root}/big.txt`, bigText(20 * 1024));
  const config = await writeConfig(dir.path, fsConfig(root, 'response_budget: "4KB"\nrecord: false\n'));
  const db = `${dir.path}/locked.db`;
  await using gw = await connectGateway(config, { db });
  await ready(gw.client);
  // Another process's writer holds the lock from now on.
  const { DatabaseSync } = await import("node:sqlite");
  const holder = new DatabaseSync(db);
  holder.exec("BEGIN IMMEDIATE");
  try {
    const want = await Deno.readTextFile(`${root}/big.txt`);
    for (let i = 0; i < 2; i++) {
      const r = await gw.client.callTool({
        name: "filesystem__read_text_file",
        arguments: { path: `${root}/big.txt` },
      });
      assert.deepEqual(r.content, [{ type: "text", text: want }]);
    }
    assert.equal(gw.stderr().match(/spooling an oversized result failed/g)?.length, 1, gw.stderr());
  } finally {
    holder.exec("ROLLBACK");
    holder.close();
  }
});

Deno.test("two gateway processes on one store spool and page concurrently without loss", async () => {
  await using dir = await tempDir();
  const root = `${dir.path}/files`;
  await Deno.mkdir(root);
  const files = ["a", "b", "c", "d"];
  for (const f of files) await Deno.writeTextFile(`${root}/${f}.txt`, `${f}:${bigText(300 * 1024)}`);
  const config = await writeConfig(dir.path, fsConfig(root, 'response_budget: "8KB"\n'));
  const db = `${dir.path}/shared.db`;
  await using one = await connectGateway(config, { db });
  await using two = await connectGateway(config, { db });
  await Promise.all([ready(one.client), ready(two.client)]);
  const run = async (client: Client, f: string) => {
    const r = await client.callTool({
      name: "filesystem__read_text_file",
      arguments: { path: `${root}/${f}.txt` },
    });
    const { callId } = structured<{ callId: string }>(r);
    // Page it through the other gateway: the store is shared.
    const other = client === one.client ? two.client : one.client;
    const bytes = await pageAll(other, callId);
    const result = JSON.parse(new TextDecoder().decode(bytes));
    assert.equal(result.content[0].text, await Deno.readTextFile(`${root}/${f}.txt`));
  };
  await Promise.all(files.flatMap((f) => [run(one.client, f), run(two.client, f)]));
});
