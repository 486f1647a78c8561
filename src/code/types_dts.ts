/**
 * TypeScript declarations of the tools a program may call, generated from their JSON Schemas: what
 * `describe_tool run_code` and `mcphub://code/types.d.ts` give an agent before it writes code.
 *
 * @module
 */

/** One callable tool as the declarations need it. */
export interface DeclaredTool {
  /** The public name (`server__tool`). */
  name: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

/** Options of {@linkcode toolDeclarations}. */
export interface DeclarationOptions {
  /** The declarations' size bound, UTF-8 bytes: tools past it are named in a closing comment. @default 24576 */
  maxBytes?: number;
}

/** Bytes of one description kept in a JSDoc line. */
const DESCRIPTION_CHARS = 300;
/** Nesting followed before a schema is typed `unknown`. */
const MAX_DEPTH = 6;

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A property key as written in a type: bare when it is an identifier, else quoted. */
function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** One line of doc text, cut to a bound, that cannot close the comment. */
function docText(text: string, max = DESCRIPTION_CHARS): string {
  const line = text.replace(/\s+/g, " ").trim().replaceAll("*/", "*\\/");
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** The TypeScript type of a JSON Schema (a bounded, forgiving reading: anything unclear is `unknown`). */
export function schemaType(schema: unknown, indent = "", depth = 0): string {
  if (schema === true || schema === undefined) return "unknown";
  if (!isSchema(schema) || depth > MAX_DEPTH) return "unknown";
  if ("const" in schema) return JSON.stringify(schema.const) ?? "unknown";
  if (Array.isArray(schema.enum) && schema.enum.length) {
    return schema.enum.slice(0, 50).map((v) => JSON.stringify(v) ?? "unknown").join(" | ");
  }
  for (const union of ["anyOf", "oneOf"] as const) {
    const parts = schema[union];
    if (Array.isArray(parts) && parts.length) {
      return [...new Set(parts.slice(0, 20).map((p) => schemaType(p, indent, depth + 1)))].join(" | ");
    }
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    return type.map((t) => schemaType({ ...schema, type: t }, indent, depth + 1)).join(" | ");
  }
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = schemaType(schema.items, indent, depth + 1);
      return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case "object":
      return objectType(schema, indent, depth);
    default:
      return isSchema(schema.properties) ? objectType(schema, indent, depth) : "unknown";
  }
}

function objectType(schema: Schema, indent: string, depth: number): string {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const names = Object.keys(properties);
  if (!names.length) return "Record<string, unknown>";
  const inner = `${indent}  `;
  const lines = names.map((name) => {
    const property = properties[name];
    const doc = isSchema(property) && typeof property.description === "string" && property.description
      ? `${inner}/** ${docText(property.description, 160)} */\n`
      : "";
    const optional = required.has(name) ? "" : "?";
    return `${doc}${inner}${key(name)}${optional}: ${schemaType(property, inner, depth + 1)};`;
  });
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** The declaration of one tool, as a member of `mcp.tools`. */
export function toolDeclaration(tool: DeclaredTool): string {
  const doc = tool.description ? `    /** ${docText(tool.description)} */\n` : "";
  const input = schemaType(tool.inputSchema ?? { type: "object" }, "    ");
  const output = tool.outputSchema === undefined ? "unknown" : schemaType(tool.outputSchema, "    ");
  return `${doc}    ${key(tool.name)}(args: ${input}): Promise<${output}>;`;
}

const HEADER = `/**
 * Code mode: the body of an async function. Call tools with \`await mcp.tools.NAME(args)\` or
 * \`await mcp.call("NAME", args)\`; a call resolves to the tool's structuredContent, else its text parsed
 * as JSON when it parses, else its text; a tool error throws. console.log is captured. What the code
 * returns (JSON) is the result of run_code; only that reaches you.
 */
declare const mcp: {
  call(name: string, args?: Record<string, unknown>): Promise<unknown>;
  tools: {
`;

/** Declarations of `tools` (in the order given) within `maxBytes`. */
export function toolDeclarations(tools: readonly DeclaredTool[], options: DeclarationOptions = {}): string {
  const maxBytes = options.maxBytes ?? 24 * 1024;
  const encoder = new TextEncoder();
  const footer = "  };\n};\n";
  let used = encoder.encode(HEADER + footer).length;
  const members: string[] = [];
  const left: string[] = [];
  for (const tool of tools) {
    const member = toolDeclaration(tool);
    const bytes = encoder.encode(member).length + 1;
    // A tool that does not fit is left out whole (never a cut declaration); its name is still given.
    if (left.length || used + bytes + 200 > maxBytes) {
      left.push(tool.name);
      continue;
    }
    members.push(member);
    used += bytes;
  }
  let text = HEADER + members.join("\n") + (members.length ? "\n" : "") + footer;
  if (left.length) {
    let names = "";
    for (const name of left) {
      if (used + names.length + name.length > maxBytes) break;
      names += `${names ? ", " : ""}${name}`;
    }
    text += `// ${left.length} more tool(s) not declared here (size bound): ${names}${
      names.split(", ").length < left.length ? ", …" : ""
    }. Ask describe_tool run_code with a query to declare the ones you need.\n`;
  }
  return text;
}
