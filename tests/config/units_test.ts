import assert from "node:assert/strict";
import { parseDuration, parseSize } from "../../src/config/mod.ts";

Deno.test("parseSize() reads bytes, B, KB, MB and GB in base 1024", async (t) => {
  const table: [string, number][] = [
    ["0", 0],
    ["512", 512],
    ["512B", 512],
    ["32KB", 32768],
    ["32kb", 32768],
    ["32 KB", 32768],
    ["1MB", 1048576],
    ["1.5MB", 1572864],
    ["2GB", 2147483648],
    [" 8 kB ", 8192],
  ];
  for (const [text, bytes] of table) {
    await t.step(JSON.stringify(text), () => assert.equal(parseSize(text), bytes));
  }
});

Deno.test("parseSize() rejects other forms with a RangeError naming the accepted ones", async (t) => {
  for (const text of ["", "KB", "-1KB", "32XB", "32 K B", "1TB", "1e3", "abc"]) {
    await t.step(JSON.stringify(text), () => {
      assert.throws(() => parseSize(text), (error: unknown) => {
        assert.ok(error instanceof RangeError);
        assert.match(error.message, /B, KB, MB or GB \(base 1024\)/);
        return true;
      });
    });
  }
});

Deno.test("parseDuration() reads Go-style durations into milliseconds", async (t) => {
  const table: [string, number][] = [
    ["0", 0],
    ["500ms", 500],
    ["30s", 30_000],
    ["30m", 1_800_000],
    ["2h", 7_200_000],
    ["1h30m", 5_400_000],
    ["1.5h", 5_400_000],
    ["1m30.5s", 90_500],
    ["1500us", 1.5],
    ["2000000ns", 2],
    ["-5s", -5000],
    ["+5s", 5000],
    [".5s", 500],
  ];
  for (const [text, ms] of table) {
    await t.step(JSON.stringify(text), () => assert.equal(parseDuration(text), ms));
  }
});

Deno.test("parseDuration() rejects other forms with a RangeError", async (t) => {
  for (const text of ["", "30", "1d", "s", "30 s", "1h 30m", "thirty seconds", "-"]) {
    await t.step(JSON.stringify(text), () => {
      assert.throws(() => parseDuration(text), (error: unknown) => {
        assert.ok(error instanceof RangeError);
        assert.match(error.message, /Go-style duration such as "500ms", "30s"/);
        return true;
      });
    });
  }
});
