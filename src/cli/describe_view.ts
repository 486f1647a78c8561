/**
 * The readable view of `mcphub describe`: the tool's name, server and description, then one line per
 * argument (name, type, required, default, description) and the output schema's fields; `--json` prints the
 * describe_tool result itself.
 *
 * @module
 */
import { formatTable } from "./table.ts";

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A schema's type in a few characters: `string`, `integer[]`, `"a"|"b"`, `object`, `string|null`. */
export function typeOf(schema: unknown): string {
  if (!isSchema(schema)) return "any";
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.map((v) => JSON.stringify(v));
    return values.length > 6 ? `${values.slice(0, 6).join("|")}|…` : values.join("|");
  }
  if ("const" in schema) return JSON.stringify(schema.const);
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key];
    if (Array.isArray(options)) return [...new Set(options.map(typeOf))].join("|");
  }
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => typeOf({ ...schema, type: t })).join("|");
  if (type === "array") return `${typeOf(schema.items)}[]`.replace(/^(.*\|.*)\[\]$/, "($1)[]");
  if (typeof type === "string") return type;
  if (isSchema(schema.properties)) return "object";
  return "any";
}

function oneLine(text: unknown, max = 100): string {
  if (typeof text !== "string") return "";
  const line = text.replace(/\s+/g, " ").trim();
  return [...line].length > max ? `${[...line].slice(0, max - 1).join("")}…` : line;
}

/** The rows of an object schema's properties: name, type, required, description (with its default). */
function rows(schema: unknown): string[][] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  return Object.entries(schema.properties).map(([name, prop]) => {
    const p = isSchema(prop) ? prop : {};
    const text = oneLine(p.description ?? p.title);
    const fallback = "default" in p ? `(default ${JSON.stringify(p.default)})` : "";
    return [
      name,
      typeOf(prop),
      required.has(name) ? "required" : "",
      text && fallback ? `${text} ${fallback}` : text || fallback,
    ];
  });
}

/** The readable view of a describe_tool result. */
export function formatDescribe(result: Record<string, unknown>): string {
  const out: string[] = [];
  const title = typeof result.title === "string" && result.title ? ` — ${result.title}` : "";
  out.push(
    `${result.namespaced}${title}  (server ${result.server}, tool ${result.downstream ?? result.tool})`,
  );
  if (typeof result.description === "string" && result.description.trim()) {
    out.push("", ...result.description.trim().split("\n").map((line) => `  ${line}`.trimEnd()));
  }
  const args = rows(result.input_schema);
  out.push("");
  if (args.length) {
    out.push("Arguments:");
    out.push(
      ...formatTable(["NAME", "TYPE", "REQUIRED", "DESCRIPTION"], args).trimEnd().split("\n").map((l) =>
        `  ${l}`.trimEnd()
      ),
    );
  } else out.push("Arguments: none");
  const output = rows(result.output_schema);
  if (output.length) {
    out.push("", "Structured output:");
    out.push(
      ...formatTable(["NAME", "TYPE", "REQUIRED", "DESCRIPTION"], output).trimEnd().split("\n").map((l) =>
        `  ${l}`.trimEnd()
      ),
    );
  }
  const hints = isSchema(result.annotations)
    ? Object.entries(result.annotations).filter(([k, v]) => k.endsWith("Hint") && v === true).map(([k]) =>
      k.replace(/Hint$/, "").replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
    )
    : [];
  if (hints.length) out.push("", `Hints: ${hints.join(", ")}`);
  out.push("", "--json prints the full input schema (what describe_tool answers)");
  return out.join("\n") + "\n";
}
