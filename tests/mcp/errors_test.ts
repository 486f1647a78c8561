/**
 * The gateway's own error codes (src/mcp/errors.ts) against both SDK lines: every code v1's `ErrorCode` and
 * v2's `ProtocolErrorCode` name has the same value here, and the module loads no SDK (step 1 of
 * docs/v2-migration.md).
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ErrorCode } from "../../src/mcp/errors.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode as V1ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { ProtocolErrorCode as V2ErrorCode } from "npm:@modelcontextprotocol/client@2.4.0";

/** An enum's names and values (a numeric TypeScript enum also maps each value back to its name). */
function entries(codes: Record<string, string | number>): [string, number][] {
  return Object.entries(codes).filter((e): e is [string, number] => typeof e[1] === "number");
}

Deno.test("ErrorCode: every code the v1 SDK's ErrorCode names, with its value", () => {
  const v1 = entries(V1ErrorCode);
  assert.equal(v1.length, 8);
  for (const [name, value] of v1) assert.equal(ErrorCode[name as keyof typeof ErrorCode], value, name);
});

Deno.test("ErrorCode: every code the v2 SDK's ProtocolErrorCode names, with its value", () => {
  const v2 = entries(V2ErrorCode);
  assert.equal(v2.length, 9);
  for (const [name, value] of v2) assert.equal(ErrorCode[name as keyof typeof ErrorCode], value, name);
});

Deno.test("ErrorCode: the codes neither SDK names, and no value twice", () => {
  // The routing-header mismatch of 2026-07-28 (neither SDK exports it), and v1's local failures, which
  // v2 reports as SdkError with string codes.
  assert.equal(ErrorCode.HeaderMismatch, -32020);
  assert.equal(ErrorCode.ConnectionClosed, -32000);
  assert.equal(ErrorCode.RequestTimeout, -32001);
  const values = Object.values(ErrorCode);
  assert.equal(new Set(values).size, values.length);
});

Deno.test("src/mcp/errors.ts imports nothing (no SDK, no npm package)", async () => {
  const file = fileURLToPath(new URL("../../src/mcp/errors.ts", import.meta.url));
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", file],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(success, new TextDecoder().decode(stderr));
  const info = JSON.parse(new TextDecoder().decode(stdout)) as { modules: { specifier: string }[] };
  assert.deepEqual(info.modules.map((m) => m.specifier), [`file://${file}`]);
});

Deno.test("httpStatusOf() reads the HTTP status of both SDK lines' transport errors, nothing else", async () => {
  const { httpStatusOf } = await import("../../src/mcp/errors.ts");
  const { SdkHttpError, SdkErrorCode } = await import("@modelcontextprotocol/client");
  const v2 = new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, "Error POSTing to endpoint: no", {
    status: 401,
    statusText: "Unauthorized",
    text: "no",
  });
  assert.equal(httpStatusOf(v2), 401);
  assert.equal(
    httpStatusOf(Object.assign(new Error("Error POSTing to endpoint (HTTP 403)"), { code: 403 })),
    403,
  );
  assert.equal(httpStatusOf(Object.assign(new Error("closed"), { code: -32000 })), undefined);
  assert.equal(httpStatusOf(new Error("plain")), undefined);
  assert.equal(httpStatusOf("401"), undefined);
});

Deno.test("McpError: mcphub's own class, made as v1's and matching both SDK lines' peer errors", async () => {
  const { McpError } = await import("../../src/mcp/sdk.ts");
  // @ts-types="@modelcontextprotocol/sdk/types"
  const v1 = await import("@modelcontextprotocol/sdk/types.js");
  const { ProtocolError, SdkError, SdkErrorCode } = await import("npm:@modelcontextprotocol/client@2.4.0");
  // No SDK class under it; what hosts and logs see is v1's: the prefix, the name, code and data.
  assert.equal(Object.getPrototypeOf(McpError.prototype), Error.prototype);
  const ours = new McpError(-32602, "bad", { k: 1 });
  const theirs = new v1.McpError(-32602, "bad", { k: 1 });
  assert.deepEqual(
    [ours.message, ours.name, ours.code, ours.data, String(ours)],
    [theirs.message, theirs.name, theirs.code, theirs.data, String(theirs)],
  );
  // A peer's error as sent: no prefix.
  assert.equal(McpError.asSent(-32002, "Resource not found").message, "Resource not found");
  // `instanceof`: its own, v2's ProtocolError by its brand; not v1's (no v1 left in src/), not v2's SdkError
  // (a local failure), not a plain Error.
  assert.ok(ours instanceof McpError);
  assert.ok(!(theirs instanceof McpError));
  assert.ok(new ProtocolError(-32602, "bad") instanceof McpError);
  assert.ok(!(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out") instanceof McpError));
  assert.ok(!(new Error("MCP error -32602: bad") instanceof McpError));
  assert.ok(!((null as unknown) instanceof McpError));
});
