import assert from "node:assert/strict";
import {
  getResultResponse,
  OutOfScopeError,
  pageBytesFor,
  RETENTION_MS,
  type Spool,
  type StoredMeta,
} from "../../src/spool/mod.ts";
import { concatBytes, mixedText, seeded, tempStore, wrappedBytes } from "./_helpers.ts";

const encoder = new TextEncoder();
const META = { server: "vecgrep", tool: "search", namespaced: "vecgrep__search" };
const BUDGETS = [512, 513, 600, 700, 1000, 2048, 4096, 32768, 65536, 1 << 20];

/** Pages a stored result from cursor 0 to done, checking every page's shape and size. */
async function readAll(
  spool: Spool,
  callId: string,
  budget: number,
  encoding?: "base64" | "utf8",
): Promise<{ bytes: Uint8Array; texts: string[]; pages: number }> {
  const parts: Uint8Array[] = [];
  const texts: string[] = [];
  let cursor = 0;
  for (let pages = 1;; pages++) {
    const response = await getResultResponse(spool, { callId, cursor, encoding }, { budget });
    assert.equal(response.status, "ok");
    assert.equal(response.cursor, cursor);
    if (budget > 0) assert.ok(wrappedBytes(response) <= budget, `page at ${cursor}: over ${budget}`);
    const next = response.nextCursor as number;
    if (encoding === "utf8") {
      texts.push(response.text as string);
      parts.push(encoder.encode(response.text as string));
      assert.ok(!("data" in response));
    } else {
      parts.push(Uint8Array.fromBase64(response.data as string));
      assert.ok(!("text" in response));
    }
    assert.equal(parts[parts.length - 1].length, next - cursor);
    assert.equal(response.done, next === response.totalBytes);
    if (response.done) return { bytes: concatBytes(parts), texts, pages };
    assert.ok(next > cursor, "a page that is not the last makes progress");
    cursor = next;
  }
}

Deno.test("getResultResponse() pages a stored result exactly, in the documented shape", async (t) => {
  using store = tempStore();
  const spool = store.spool();
  const text = mixedText(60_000, seeded(11)) + '{"tail":"\\"quoted\\"\\n"}';
  const expected = encoder.encode(text);
  const { callId } = spool.put(text, META);

  await t.step("the first page, base64 by default", async () => {
    const response = await getResultResponse(spool, { callId }, { budget: 32 * 1024 });
    assert.deepEqual(Object.keys(response), [
      "status",
      "callId",
      "mediaType",
      "data",
      "cursor",
      "nextCursor",
      "done",
      "totalBytes",
    ]);
    assert.equal(response.mediaType, "application/json");
    assert.equal(response.cursor, 0);
    assert.equal(response.nextCursor, 8192);
    assert.equal(response.done, false);
    assert.equal(response.totalBytes, expected.length);
    assert.deepEqual(Uint8Array.fromBase64(response.data as string), expected.subarray(0, 8192));
  });

  for (const budget of [0, ...BUDGETS]) {
    await t.step(`budget ${budget}: base64 and utf8 pages reassemble the result`, async () => {
      const base64 = await readAll(spool, callId, budget);
      assert.deepEqual(base64.bytes, expected);
      assert.equal(base64.pages, Math.ceil(expected.length / pageBytesFor(budget)));
      const utf8 = await readAll(spool, callId, budget, "utf8");
      assert.equal(utf8.texts.join(""), text);
      assert.deepEqual(utf8.bytes, expected);
    });
  }

  await t.step("a utf8 page of multibyte text stops at most 3 bytes short of a full page", async () => {
    const cjk = spool.put("中".repeat(10_000), META);
    const response = await getResultResponse(spool, { callId: cjk.callId, encoding: "utf8" }, { budget: 0 });
    assert.equal(response.nextCursor, 8190);
    assert.equal(response.text, "中".repeat(2730));
  });

  await t.step("a utf8 page of escape-heavy text shrinks to stay within the base64 page's size", async () => {
    const quotes = spool.put('"'.repeat(100_000), META);
    const response = await getResultResponse(spool, { callId: quotes.callId, encoding: "utf8" }, {
      budget: 0,
    });
    const base64 = await getResultResponse(spool, { callId: quotes.callId }, { budget: 0 });
    assert.ok((response.nextCursor as number) > 0);
    assert.ok(wrappedBytes(response) <= wrappedBytes(base64));
  });

  await t.step("an empty stored result is one done page", async () => {
    const empty = spool.put("", META);
    assert.deepEqual(await getResultResponse(spool, { callId: empty.callId, cursor: 0 }, { budget: 512 }), {
      status: "ok",
      callId: empty.callId,
      mediaType: "application/json",
      data: "",
      cursor: 0,
      nextCursor: 0,
      done: true,
      totalBytes: 0,
    });
  });
});

Deno.test("getResultResponse() answers unavailable for unknown, malformed and expired ids", async (t) => {
  using store = tempStore();
  let now = 5_000;
  const spool = store.spool({ clock: () => now });
  const { callId } = spool.put("payload", META);
  const reason = "The callId is unknown or its stored result has expired.";
  const cases: [string, unknown, string][] = [
    ["unknown", "0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"],
    ["upper case", callId.toUpperCase(), callId.toUpperCase()],
    ["too short", "abc", "abc"],
    ["a number", 42, "42"],
    ["an object", { id: 1 }, '{"id":1}'],
    ["very long", "z".repeat(10_000), `${"z".repeat(64)}…`],
  ];
  for (const [label, given, echoed] of cases) {
    await t.step(label, async () => {
      for (const budget of [0, 512, 32768]) {
        const response = await getResultResponse(spool, { callId: given }, { budget, canRead: () => false });
        assert.equal(response.status, "unavailable");
        assert.equal(response.reason, reason);
        if (budget !== 512) assert.equal(response.callId, echoed);
        if (budget > 0) assert.ok(wrappedBytes(response) <= budget, `${wrappedBytes(response)} > ${budget}`);
      }
      const full = await getResultResponse(spool, { callId: given }, { budget: 32768 });
      assert.match(full.hint as string, /24 hours/);
    });
  }
  await t.step("expired by the clock, before any prune", async () => {
    now += RETENTION_MS;
    assert.deepEqual(await getResultResponse(spool, { callId, cursor: 0 }, { budget: 32768 }), {
      status: "unavailable",
      reason,
      callId,
      hint: "Results are kept 24 hours; rerun the original tool call for a new callId.",
    });
  });
  await t.step("a typical unavailable answer keeps its hint at 512 bytes", async () => {
    const response = await getResultResponse(spool, { callId }, { budget: 512 });
    assert.ok("hint" in response);
  });
});

Deno.test("getResultResponse() answers cursor_out_of_range with the size and the valid range", async () => {
  using store = tempStore();
  const spool = store.spool();
  const { callId } = spool.put("0123456789", META);
  for (const cursor of [10, 11, 1_000_000]) {
    const response = await getResultResponse(spool, { callId, cursor }, { budget: 32768 });
    assert.deepEqual(response, {
      status: "cursor_out_of_range",
      reason: `Cursor ${cursor} is past the end of the 10-byte stored result; valid cursors are 0 to 9.`,
      callId,
      cursor,
      totalBytes: 10,
      hint: "A page with done: true was the last; use cursor 0 to read it again.",
    });
    const small = await getResultResponse(spool, { callId, cursor }, { budget: 512 });
    assert.ok(wrappedBytes(small) <= 512);
    assert.equal(small.status, "cursor_out_of_range");
    assert.equal(small.totalBytes, 10);
  }
  const last = await getResultResponse(spool, { callId, cursor: 9 }, { budget: 512 });
  assert.equal(last.done, true);
  assert.equal(atob(last.data as string), "9");
});

Deno.test("getResultResponse() rejects bad arguments with errors that say what is valid", async (t) => {
  using store = tempStore();
  const spool = store.spool();
  const { callId } = spool.put("é".repeat(100), META);
  const call = (args: Record<string, unknown>) =>
    getResultResponse(spool, { callId, ...args } as Parameters<typeof getResultResponse>[1], {
      budget: 4096,
    });

  await t.step("cursors", async () => {
    for (const cursor of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      await assert.rejects(() => call({ cursor }), (error: unknown) => {
        return error instanceof RangeError && /cursor must be a non-negative integer/.test(error.message);
      });
    }
    for (const cursor of ["x", "0", true, [0], {}]) {
      await assert.rejects(() => call({ cursor }), (error: unknown) => {
        return error instanceof TypeError && /cursor must be a non-negative integer/.test(error.message);
      });
    }
    assert.equal((await call({ cursor: null })).cursor, 0);
  });
  await t.step("encodings", async () => {
    for (const encoding of ["hex", "UTF8", "utf-8", 1]) {
      await assert.rejects(() => call({ encoding }), (error: unknown) => {
        return error instanceof TypeError && /"base64".*"utf8"/.test(error.message);
      });
    }
    assert.ok("data" in await call({ encoding: "base64" }));
    assert.ok("text" in await call({ encoding: "utf8" }));
  });
  await t.step("a utf8 cursor inside a character", async () => {
    await assert.rejects(() => call({ cursor: 1, encoding: "utf8" }), (error: unknown) => {
      return error instanceof RangeError && /inside a UTF-8 character/.test(error.message);
    });
    // base64 pages may start anywhere.
    assert.equal((await call({ cursor: 1 })).status, "ok");
  });
  await t.step("a missing callId", async () => {
    for (const missing of [undefined, null]) {
      await assert.rejects(
        () => getResultResponse(spool, { callId: missing }, { budget: 4096 }),
        (error: unknown) => error instanceof TypeError && /callId is required/.test(error.message),
      );
    }
  });
  await t.step("a budget below 512", async () => {
    await assert.rejects(() => getResultResponse(spool, { callId }, { budget: 100 }), RangeError);
  });
});

Deno.test("getResultResponse() throws OutOfScopeError when canRead refuses the stored tool", async () => {
  using store = tempStore();
  const spool = store.spool();
  const stored = spool.put("secret", { ...META, agent: "claude" });
  const seen: StoredMeta[] = [];
  const canRead = (meta: StoredMeta) => {
    seen.push(meta);
    return meta.server !== "vecgrep";
  };
  await assert.rejects(
    () => getResultResponse(spool, { callId: stored.callId, cursor: 0 }, { budget: 4096, canRead }),
    (error: unknown) => {
      assert.ok(error instanceof OutOfScopeError);
      assert.equal(error.callId, stored.callId);
      assert.equal(error.server, "vecgrep");
      assert.equal(error.tool, "search");
      assert.ok(!error.message.includes("vecgrep"), "the message does not reveal the server");
      return true;
    },
  );
  assert.deepEqual(seen, [stored]);
  // Scope is checked before the cursor, so an out-of-scope agent learns nothing about the size either.
  await assert.rejects(
    () => getResultResponse(spool, { callId: stored.callId, cursor: 10 ** 9 }, { budget: 4096, canRead }),
    OutOfScopeError,
  );
  const allowed = await getResultResponse(spool, { callId: stored.callId }, {
    budget: 4096,
    canRead: () => true,
  });
  assert.equal(atob(allowed.data as string), "secret");
});

Deno.test("getResultResponse() fits small budgets even at terabyte cursors", async () => {
  const totalBytes = 10 ** 12;
  const fill = [0x22, 0x41, 0xe4, 0xb8, 0xad];
  const fake = {
    meta: (callId: string): StoredMeta => ({
      callId,
      ...META,
      totalBytes,
      createdAt: 0,
      expiresAt: Number.MAX_SAFE_INTEGER,
    }),
    readPage: (_callId: string, cursor: number, pageBytes: number) => {
      if (cursor >= totalBytes) return "cursor_out_of_range";
      const bytes = new Uint8Array(Math.min(pageBytes, totalBytes - cursor));
      for (let i = 0; i < bytes.length; i++) bytes[i] = fill[(cursor + i) % fill.length];
      return { bytes, totalBytes };
    },
  } as unknown as Spool;
  const callId = "3f9a1c2e7b804d5e9f1a2b3c4d5e6f70";
  for (const budget of BUDGETS) {
    for (const encoding of ["base64", "utf8"]) {
      const cursor = totalBytes - 10 * 5 * 8192;
      const response = await getResultResponse(fake, { callId, cursor, encoding }, { budget });
      assert.equal(response.status, "ok");
      assert.ok(wrappedBytes(response) <= budget, `${encoding} at ${budget}: ${wrappedBytes(response)}`);
      assert.ok((response.nextCursor as number) > cursor);
    }
    const past = await getResultResponse(fake, { callId, cursor: totalBytes + 1 }, { budget });
    assert.equal(past.status, "cursor_out_of_range");
    assert.ok(wrappedBytes(past) <= budget);
  }
});

Deno.test("pageBytesFor() follows min(8192, (budget - 448) / 3), 8192 when unlimited", () => {
  assert.equal(pageBytesFor(0), 8192);
  assert.equal(pageBytesFor(512), 21);
  assert.equal(pageBytesFor(32 * 1024), 8192);
  assert.equal(pageBytesFor(4096), 1216);
  assert.throws(() => pageBytesFor(511), RangeError);
  assert.throws(() => pageBytesFor(-1), RangeError);
});
