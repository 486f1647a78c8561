/**
 * The tool list a gateway advertises (issue 40: moved out of gateway.ts): a downstream definition as
 * mounted (its output schema widened to admit the stored-result receipt), the advertised list built in
 * steps, and what identifies a list so that `tools/list_changed` is sent only when it changed.
 *
 * @module
 */
import type { Tool } from "../mcp/sdk.ts";
import { type CatalogTool, PackedTool } from "../catalog/mod.ts";

/**
 * A downstream definition as mounted: the public name, a `[server] ` description prefix, and an
 * `outputSchema` (when the tool has one) that also admits the stored-result receipt, so a client that
 * validates structured results (the SDK's `Client.callTool`) accepts a receipt as well as a real result.
 */
export function mountedDefinition(entry: CatalogTool): Tool {
  const def = entry.definition;
  const description = def.description ? `[${entry.server}] ${def.description}` : `[${entry.server}]`;
  const mounted: Record<string, unknown> = {
    ...def,
    name: entry.namespaced,
    description,
    inputSchema: def.inputSchema ?? { type: "object" },
  };
  if (def.outputSchema && typeof def.outputSchema === "object") {
    mounted.outputSchema = admitReceipt(def.outputSchema as Record<string, unknown>);
  }
  return mounted as Tool;
}

/**
 * What identifies an advertised tool list, tool by tool: the public name, the server ("" for a
 * meta-tool) and the definition it is built from (see {@linkcode mountedDefinition}).
 */
export type Listed = readonly (readonly [name: string, server: string, definition: object])[];

/** The {@linkcode Listed} form of meta-tools followed by mounted tools. */
export function listedOf(meta: readonly Tool[], mounted: readonly CatalogTool[]): Listed {
  const listed: (readonly [string, string, object])[] = meta.map((t) => [t.name, "", t]);
  // The packed definition: the same object while a server's list is unchanged, its JSON at hand otherwise.
  for (const entry of mounted) listed.push([entry.namespaced, entry.server, entry.packed]);
  return listed;
}

/** Tools compared or built between two looks at the clock. */
const TOOLS_PER_STEP = 256;

/**
 * True when two tool lists would be advertised the same, in steps: names and servers equal, definitions
 * the same object (a server that did not list again) or, failing that, the same JSON.
 */
export function* sameListedSteps(a: Listed, b: Listed): Generator<void, boolean> {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const [name, server, def] = a[i]!;
    const [otherName, otherServer, otherDef] = b[i]!;
    if (name !== otherName || server !== otherServer) return false;
    if (def !== otherDef && definitionJson(def) !== definitionJson(otherDef)) return false;
    if (i % TOOLS_PER_STEP === TOOLS_PER_STEP - 1) yield;
  }
  return true;
}

/** A listed definition's JSON: a packed one's own text, else serialized. */
function definitionJson(def: object): string {
  return def instanceof PackedTool ? def.json : JSON.stringify(def);
}

/** Meta-tools, then the mounted tools' definitions as advertised, in steps. */
export function* advertisedSteps(
  meta: readonly Tool[],
  mounted: readonly CatalogTool[],
): Generator<void, Tool[]> {
  const tools = [...meta];
  for (let i = 0; i < mounted.length; i++) {
    tools.push(mountedDefinition(mounted[i]!));
    if (i % TOOLS_PER_STEP === TOOLS_PER_STEP - 1) yield;
  }
  return tools;
}

/** The structured receipt of a stored result (see spool/receipt.ts), as a JSON Schema. */
const RECEIPT_SCHEMA = {
  type: "object",
  properties: {
    status: { const: "stored" },
    callId: { type: "string" },
    server: { type: "string" },
    tool: { type: "string" },
    namespaced: { type: "string" },
    originalBytes: { type: "integer" },
    budgetBytes: { type: "integer" },
    preview: { type: "string" },
    nextAction: { type: "string" },
  },
  required: ["status", "callId", "originalBytes", "budgetBytes"],
};

/**
 * A tool's output schema widened to `original OR receipt`. Root-level keywords that locate things
 * (`$schema`, `$id`, `$defs`, `definitions`) stay at the root so the original's `$ref`s still resolve.
 */
export function admitReceipt(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema, $id, $defs, definitions, ...rest } = schema;
  const root: Record<string, unknown> = {};
  if ($schema !== undefined) root.$schema = $schema;
  if ($id !== undefined) root.$id = $id;
  root.type = "object";
  root.anyOf = [rest, RECEIPT_SCHEMA];
  if ($defs !== undefined) root.$defs = $defs;
  if (definitions !== undefined) root.definitions = definitions;
  return root;
}
