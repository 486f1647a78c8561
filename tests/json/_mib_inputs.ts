/**
 * A MiB of JSON that a quadratic scan of escapes would choke on (backslashes, quotes, escaped quotes and
 * keys): shared by tests/json/safe_json_test.ts (parsed as JSON.parse parses it) and
 * scripts/bench/bounds_bench.ts (timed against a plain MiB).
 *
 * @module
 */

const R = String.raw;

/** `[label, text, has an escaped key]` for each input, of about `MIB` characters (1 MiB unless given). */
export function mibInputs(MIB = 1024 * 1024): [string, string, boolean][] {
  return [
    ["a MiB of escaped backslashes in a value", `{"a":"${"\\\\".repeat(MIB / 2)}"}`, false],
    ["a MiB of escaped backslashes in a key", `{"${"\\\\".repeat(MIB / 2)}":1}`, true],
    ["a MiB of escaped quotes in a value", `{"a":"${'\\"'.repeat(MIB / 2)}"}`, false],
    ["a MiB of escaped quotes in a key", `{"${'\\"'.repeat(MIB / 2)}":1}`, true],
    ["a MiB of empty strings", `[${'"",'.repeat(MIB / 3)}""]`, false],
    ["a MiB of one-escape strings", `[${R`"\n",`.repeat(MIB / 5)}""]`, false],
    [
      "a MiB of one-escape strings followed by spaces",
      `[${(R`"\n"` + " ".repeat(64) + ",").repeat(MIB / 70)}""]`,
      false,
    ],
    ["a MiB of escaped keys", `[${R`{"\u0041":1},`.repeat(MIB / 13)}{}]`, true],
    ["an unterminated MiB of backslashes", `{"a":"${"\\".repeat(MIB)}`, false],
    ["an odd run before each quote", `["${'\\\\\\"'.repeat(MIB / 4)}"]`, false],
  ];
}
