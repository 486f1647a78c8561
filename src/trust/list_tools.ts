/**
 * One page of a downstream server's `tools/list`, validated as the SDK's `Client.listTools` does it but,
 * for a large answer, one tool at a time in slices: the SDK validates the whole answer (and 100,000 tools
 * take ~1 s) in one synchronous step that holds the gateway's event loop.
 *
 * @module
 */
import { type Client, loadClientSdk, type ParsedToolList as ListToolsResult } from "../mcp/sdk.ts";
import { SLICE_MS, Stepper } from "../json/slices.ts";
import { UnparsedDefinition } from "./limits.ts";

/** Above this many tools in one page, the page is validated in slices; smaller pages take the SDK's path. */
export const SLICED_LIST_MIN_TOOLS = 1_000;

/**
 * The threshold in force ({@link SLICED_LIST_MIN_TOOLS}); a benchmark sets `minTools` to `Infinity` to
 * measure the whole-page path inside a hub.
 */
export const listSlicing: { minTools: number } = { minTools: SLICED_LIST_MIN_TOOLS };

/** Tools validated between two looks at the clock. */
const TOOLS_PER_STEP = 32;

/** The parses, from the client's module (loaded before any client exists to list with). */
type Parses = Awaited<ReturnType<typeof loadClientSdk>>;

/** Any object, passed through as is (`ResultSchema` is a loose object; without its one key it checks nothing more). */
let anyObject: ReturnType<Parses["ResultSchema"]["omit"]> | undefined;

/** What a page request passes on to `Client.request`. */
export type ListToolsOptions = Parameters<Client["listTools"]>[1];

/** The downstream client's record of tools (output-schema validators, task-support flags for `callTool`). */
interface ToolMetadataCache {
  cacheToolMetadata(tools: ListToolsResult["tools"]): void;
}

/** A zod issue as far as this module needs it (its path is re-rooted under `tools[i]`). */
interface Issue {
  path: PropertyKey[];
}

/** A failed zod parse: the error and its issues. */
interface ParseError extends Error {
  issues: Issue[];
}

/**
 * Lists one page of tools, exactly as v1's `client.listTools(params, options)` did: the same request, the
 * same result (v1's `ListToolsResultSchema` output), the same ZodError (same issues, same order) when
 * the answer is invalid, and the same tool metadata recorded in the client for `callTool`. Never from the
 * v2 client's response cache, and every tool the server listed (v2's `listTools` drops some): the trust
 * screen judges them all. A page of more
 * than {@link SLICED_LIST_MIN_TOOLS} tools is validated tool by tool in slices of ~{@link SLICE_MS} ms.
 */
export async function listToolsPage(
  client: Client,
  params: { cursor?: string },
  options?: ListToolsOptions,
  sliceMs = SLICE_MS,
): Promise<ListToolsResult> {
  const parses = await loadClientSdk();
  const { ListToolsResultSchema, sdkSafeParse } = parses;
  anyObject ??= parses.ResultSchema.omit({ _meta: true });
  // The answer comes back as sent (any object); all of its checks are made below.
  let raw = await client.request({ method: "tools/list", params }, anyObject, options) as Record<
    string,
    unknown
  >;
  let tools = raw.tools;
  // Tools judged over the limits from their bytes (stdio.ts) are checked as a valid placeholder, so the
  // others' errors keep their indexes, and come back in their place: the caller lists them as rejected.
  const standIns = new Map<number, UnparsedDefinition>();
  if (Array.isArray(tools)) {
    tools.forEach((tool, i) => tool instanceof UnparsedDefinition && standIns.set(i, tool));
    if (standIns.size) {
      tools = tools.map((tool) => tool instanceof UnparsedDefinition ? PLACEHOLDER : tool);
      raw = { ...raw, tools };
    }
  }
  let result: ListToolsResult;
  if (!Array.isArray(tools) || tools.length <= listSlicing.minTools) {
    const parsed = sdkSafeParse(ListToolsResultSchema, raw);
    if (!parsed.success) throw parsed.error;
    result = parsed.data;
  } else {
    result = await new Stepper(validateSteps(parses, raw, tools)).finishAsync(sliceMs);
  }
  if (!standIns.size) {
    (client as unknown as ToolMetadataCache).cacheToolMetadata(result.tools);
    return result;
  }
  (client as unknown as ToolMetadataCache).cacheToolMetadata(result.tools.filter((_, i) => !standIns.has(i)));
  for (const [i, standIn] of standIns) {
    result.tools[i] = standIn as unknown as ListToolsResult["tools"][number];
  }
  return result;
}

/** What a stand-in is checked as (see {@linkcode listToolsPage}). */
const PLACEHOLDER = { name: "unparsed", inputSchema: { type: "object" } };

/**
 * Validates a page as `ListToolsResultSchema` would, the tools one by one: the rest of the page first
 * (with no tools), then each tool, then throws the one ZodError the whole parse would have thrown.
 */
function* validateSteps(
  { ListToolsResultSchema, ToolSchema, sdkSafeParse }: Parses,
  raw: Record<string, unknown>,
  tools: unknown[],
): Generator<void, ListToolsResult> {
  const shell = sdkSafeParse(ListToolsResultSchema, { ...raw, tools: [] });
  let first: ParseError | undefined = shell.success ? undefined : shell.error as unknown as ParseError;
  // The object's keys are checked in the schema's order (`_meta`, `nextCursor`, `tools`), so the page's
  // own issues come before the tools' ones, and the tools' ones in index order, as in the whole parse.
  const issues: Issue[] = first ? [...first.issues] : [];
  const out: ListToolsResult["tools"] = new Array(tools.length);
  for (let i = 0; i < tools.length; i++) {
    const r = sdkSafeParse(ToolSchema, tools[i]);
    if (r.success) out[i] = r.data;
    else {
      const error = r.error as unknown as ParseError;
      first ??= error;
      for (const issue of error.issues) issues.push({ ...issue, path: ["tools", i, ...issue.path] });
    }
    if (i % TOOLS_PER_STEP === TOOLS_PER_STEP - 1) yield;
  }
  if (first || !shell.success) {
    // The error class the SDK's parse builds its error with (zod's `$ZodRealError`, which is not
    // exported to us); were it out of reach after an upgrade, the whole parse gives the error instead.
    const ZodError = (first as unknown as { _zod?: { constr?: unknown } })._zod?.constr;
    if (typeof ZodError !== "function") {
      const whole = sdkSafeParse(ListToolsResultSchema, raw);
      throw whole.success ? first : whole.error;
    }
    throw new (ZodError as new (issues: Issue[]) => Error)(issues);
  }
  const result = shell.data;
  result.tools = out;
  return result;
}
