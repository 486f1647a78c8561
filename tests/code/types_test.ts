/** TypeScript declarations of the callable tools from their JSON Schemas. */
import assert from "node:assert/strict";
import { schemaType, toolDeclarations } from "../../src/code/mod.ts";

Deno.test("schemaType() reads the common JSON Schema shapes", async (t) => {
  const cases: [string, unknown, string][] = [
    ["scalars", { type: "integer" }, "number"],
    ["a union of types", { type: ["string", "null"] }, "string | null"],
    ["an enum", { enum: ["a", "b", 3] }, '"a" | "b" | 3'],
    ["a const", { const: "x" }, '"x"'],
    ["an array", { type: "array", items: { type: "string" } }, "string[]"],
    ["anyOf", { anyOf: [{ type: "string" }, { type: "number" }] }, "string | number"],
    ["an empty object", { type: "object" }, "Record<string, unknown>"],
    ["no schema", true, "unknown"],
    ["an unknown keyword soup", { not: {} }, "unknown"],
    [
      "an object with required and optional keys",
      {
        type: "object",
        properties: {
          path: { type: "string", description: "Where */ it is" },
          "max-depth": { type: "number" },
        },
        required: ["path"],
      },
      '{\n  /** Where *\\/ it is */\n  path: string;\n  "max-depth"?: number;\n}',
    ],
  ];
  for (const [name, schema, expected] of cases) {
    await t.step(name, () => assert.equal(schemaType(schema), expected));
  }
});

Deno.test("toolDeclarations() declares mcp.tools with input and output types, quoting names", () => {
  const text = toolDeclarations([
    {
      name: "everything__get-sum",
      description: "Adds two numbers",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
    },
  ]);
  assert.ok(
    text.includes(
      '    /** Adds two numbers */\n    "everything__get-sum"(args: {\n      a: number;\n      b: number;\n    }): Promise<{\n      sum: number;\n    }>;\n',
    ),
    text,
  );
  assert.ok(text.startsWith("/**\n * Code mode: the body of an async function."));
  assert.ok(text.endsWith("  };\n};\n"));
});

Deno.test("toolDeclarations() stays within its size bound and names the tools it left out", () => {
  const tools = Array.from({ length: 200 }, (_, i) => ({
    name: `s__tool_${String(i).padStart(3, "0")}`,
    description: "d".repeat(200),
    inputSchema: { type: "object", properties: { x: { type: "string", description: "y".repeat(100) } } },
  }));
  const text = toolDeclarations(tools, { maxBytes: 8192 });
  assert.ok(new TextEncoder().encode(text).length <= 8192 + 200, `${text.length}`);
  const declared = [...text.matchAll(/^ {4}(s__tool_\d+)\(/gm)].map((m) => m[1]);
  assert.ok(declared.length > 5 && declared.length < 200);
  assert.match(
    text,
    new RegExp(`// ${200 - declared.length} more tool\\(s\\) not declared here \\(size bound\\): s__tool_`),
  );
});
