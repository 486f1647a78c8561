import assert from "node:assert/strict";
import { AjvJsonSchemaValidator, lazyValidator } from "../../src/mcp/sdk_client.ts";

const SCHEMA = {
  type: "object",
  properties: { n: { type: "integer" }, when: { type: "string", format: "date-time" } },
  required: ["n"],
} as const;

Deno.test("lazyValidator() answers exactly as the SDK's Ajv validator", () => {
  const lazy = lazyValidator().getValidator<{ n: number }>(SCHEMA);
  const eager = new AjvJsonSchemaValidator().getValidator<{ n: number }>(SCHEMA);
  for (
    const input of [
      { n: 1 },
      { n: 1.5 },
      {},
      { n: 2, when: "2026-12-02T10:00:00Z" },
      { n: 2, when: "not a date" },
      "text",
      null,
    ]
  ) {
    assert.deepEqual(lazy(input), eager(input), JSON.stringify(input));
  }
});

Deno.test("lazyValidator() compiles nothing at listing time: a broken schema fails only when used", () => {
  // Ajv throws compiling this schema; the SDK's default would throw in listTools for every tool.
  const broken = { type: "object", properties: { a: { type: "no-such-type" } } };
  const validate = lazyValidator().getValidator(broken as never);
  // Ajv's own compile error, at the first use.
  assert.throws(() => validate({ a: 1 }), (error: unknown) => {
    assert.equal((error as Error).constructor, Error);
    assert.equal((error as Error).message, "type must be JSONType or JSONType[]: no-such-type");
    return true;
  });
});
