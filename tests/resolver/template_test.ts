import assert from "node:assert/strict";
import {
  argumentTemplate,
  REQUIRED_PLACEHOLDER,
  TEMPLATE_MAX_FIELDS,
  TEMPLATE_MAX_NAME_BYTES,
} from "../../src/resolver/mod.ts";

Deno.test("argumentTemplate() marks required fields and lists them first", () => {
  const t = argumentTemplate({
    type: "object",
    properties: { head: { type: "number" }, path: { type: "string" }, tail: { type: "number" } },
    required: ["path"],
  });
  assert.deepEqual(t.required_fields, ["path"]);
  assert.deepEqual(Object.entries(t.argument_template), [["path", REQUIRED_PLACEHOLDER], ["head", null], [
    "tail",
    null,
  ]]);
  assert.equal(t.argument_template_truncated, false);
});

Deno.test("argumentTemplate() keeps a required field the schema forgot to declare", () => {
  const t = argumentTemplate({ type: "object", properties: {}, required: ["id", 7] });
  assert.deepEqual(t.argument_template, { id: "<value>" });
});

Deno.test("argumentTemplate() is empty for a missing or odd schema", () => {
  for (const schema of [undefined, null, "x", [], { properties: [] }]) {
    assert.deepEqual(argumentTemplate(schema), {
      required_fields: [],
      argument_template: {},
      argument_template_truncated: false,
    });
  }
});

Deno.test("argumentTemplate() stops at 48 fields and flags the cut", () => {
  const properties = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, {}]));
  const t = argumentTemplate({ type: "object", properties, required: ["f59"] });
  assert.equal(Object.keys(t.argument_template).length, TEMPLATE_MAX_FIELDS);
  assert.equal(t.argument_template_truncated, true);
  // The required field survives the cut: required fields come first.
  assert.equal(t.argument_template.f59, "<value>");
  const exact = argumentTemplate({
    properties: Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`f${i}`, {}])),
  });
  assert.equal(exact.argument_template_truncated, false);
});

Deno.test("argumentTemplate() stops at 2,048 bytes of field names", () => {
  const long = (i: number) => `${"é".repeat(50)}${String(i).padStart(2, "0")}`; // 102 bytes each
  const properties = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [long(i), {}]));
  const t = argumentTemplate({ properties });
  const bytes = Object.keys(t.argument_template).reduce((a, k) => a + new TextEncoder().encode(k).length, 0);
  assert.ok(bytes <= TEMPLATE_MAX_NAME_BYTES);
  assert.equal(Object.keys(t.argument_template).length, 20);
  assert.equal(t.argument_template_truncated, true);
});

Deno.test("argumentTemplate() keeps a field named __proto__ as a field", () => {
  const t = argumentTemplate(JSON.parse('{"properties":{"__proto__":{}},"required":["__proto__"]}'));
  assert.deepEqual(Object.keys(t.argument_template), ["__proto__"]);
  assert.equal(Object.getPrototypeOf(t.argument_template), Object.prototype);
});
