/**
 * The `run_code` meta-tool: checks its input, runs the program in the sandbox with the caller's
 * scope on every inner call, and turns the outcome into a tool result that goes through the
 * response budget like any other (spooled whole past it, with a receipt for get_result).
 *
 * @module
 */
import type { ServerOperation } from "../telemetry/mod.ts";
import type { CatalogTool } from "../catalog/mod.ts";
import { MAX_TOOL_NAME_CHARS } from "../trust/mod.ts";
import { parseDuration } from "../config/light.ts";
import { type CallVia, type Hub, searchTools } from "../hub/mod.ts";
import { invalidParams, messageOf } from "../mcp/mod.ts";
import type { CallToolResult } from "../mcp/sdk.ts";
import {
  DEFAULT_LIMITS,
  runSandboxed,
  type SandboxLimits,
  type SandboxOutcome,
  SandboxPool,
} from "./sandbox.ts";
import { type DeclaredTool, toolDeclarations } from "./types_dts.ts";
import { RUN_CODE } from "./names.ts";

export { RUN_CODE, TYPES_URI } from "./names.ts";

/** The time a program gets when its call names none. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The longest program accepted, UTF-8 bytes. */
export const MAX_CODE_BYTES = 256 * 1024;

/**
 * The process's spare sandbox (see {@linkcode SandboxPool}): started at the first run, so a gateway
 * that never runs code starts none.
 */
let pool: SandboxPool | undefined;

/** Ends the spare sandbox (a gateway closing); a later run starts a new one. */
export async function closeSandboxes(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.close();
}

/** Options of {@linkcode runCode}. */
export interface RunCodeOptions {
  /** A cancelled request or a shutdown. */
  signal?: AbortSignal;
  /** Limits besides the time (tests shrink them). @default DEFAULT_LIMITS */
  limits?: Partial<Omit<SandboxLimits, "timeoutMs">>;
  /** How the run_code call reached the gateway (its record). @default "call_tool" */
  via?: CallVia;
  /** The host request this run serves: the parent of its inner calls' spans, and its span's event. */
  trace?: ServerOperation;
}

/** Input as checked: the program and its time. */
export interface RunCodeInput {
  code: string;
  timeoutMs: number;
}

/** Checks run_code's arguments (protocol misuse is InvalidParams); the time is capped by call_timeout. */
export function runCodeInput(hub: Hub, args: Record<string, unknown>): RunCodeInput {
  const { code, timeout } = args;
  if (typeof code !== "string" || code.trim() === "") {
    invalidParams(`run_code: "code" must be a non-empty string`);
  }
  const bytes = new TextEncoder().encode(code).length;
  if (bytes > MAX_CODE_BYTES) {
    invalidParams(`run_code: "code" is ${bytes} bytes; at most ${MAX_CODE_BYTES} are accepted`);
  }
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (timeout !== undefined && timeout !== null) {
    if (typeof timeout !== "string") invalidParams(`run_code: "timeout" must be a duration such as "30s"`);
    try {
      timeoutMs = parseDuration(timeout);
    } catch (error) {
      invalidParams(`run_code: "timeout": ${messageOf(error)}`);
    }
    if (!(timeoutMs >= 1)) invalidParams(`run_code: "timeout" must be positive, such as "30s"`);
  }
  return { code, timeoutMs: Math.min(Math.ceil(timeoutMs), hub.config.callTimeoutMs) };
}

/**
 * The tool a program names, within the caller's scope. An agent's miss says the tool is outside its
 * scope, and nothing more: the same words whether the tool exists elsewhere or nowhere.
 */
async function toolInScope(hub: Hub, name: string): Promise<CatalogTool> {
  // No tool has a longer name: no lookup (the words are those of any other miss).
  if (name.length > MAX_TOOL_NAME_CHARS) miss(hub, name, []);
  const ref = { tool: name };
  const entry = await hub.find(ref) ?? (name.includes("__") ? undefined : await uniqueBare(hub, name));
  if (entry) return entry;
  const down = hub.unavailable(ref);
  if (down) throw new Error(`${down}`);
  miss(hub, name, hub.agent === undefined ? hub.closest(name) : []);
}

/** A name that reaches no tool: for an agent, outside its scope (nothing more); else unknown, with near names. */
function miss(hub: Hub, name: string, near: readonly string[]): never {
  const shown = JSON.stringify(name.length > 128 ? `${name.slice(0, 128)}…` : name);
  if (hub.agent !== undefined) {
    throw new Error(
      `Tool ${shown} is outside the scope of agent "${hub.agent}": it cannot be called from here`,
    );
  }
  throw new Error(
    `Unknown tool ${shown}.${near.length ? ` Did you mean ${near.map((n) => `"${n}"`).join(", ")}?` : ""}`,
  );
}

async function uniqueBare(hub: Hub, name: string): Promise<CatalogTool | undefined> {
  const found = await hub.bare(name);
  if (found.length > 1) {
    throw new Error(
      `"${name}" is a tool of ${found.length} servers; name one of ${
        found.map((t) => `"${t.namespaced}"`).join(", ")
      }`,
    );
  }
  return found[0];
}

/** A tool result as the program sees it: structuredContent, else its text as JSON, else its text. */
export function callValue(result: CallToolResult): unknown {
  const texts = (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text as string);
  if (result.isError === true) throw new Error(texts.join("\n") || "The tool reported an error");
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (!texts.length) return result.content ?? [];
  const text = texts.join("\n");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function newRunId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The outcome as a tool result: the returned value as JSON text and `{result, logs, calls}`. */
export function outcomeResult(outcome: SandboxOutcome): CallToolResult {
  if (outcome.ok) {
    const result = outcome.value ?? null;
    return {
      content: [{ type: "text", text: JSON.stringify(result) }],
      structuredContent: { result, logs: outcome.logs, calls: outcome.calls },
    };
  }
  const where = outcome.line !== undefined ? ` (line ${outcome.line})` : "";
  const text = outcome.limit
    ? `run_code stopped: limit "${outcome.limit}" exceeded. ${outcome.error}`
    : `run_code failed${where}: ${outcome.error}`;
  return {
    content: [{ type: "text", text }],
    structuredContent: {
      error: outcome.error,
      ...(outcome.line !== undefined ? { line: outcome.line } : {}),
      ...(outcome.limit ? { limit: outcome.limit } : {}),
      logs: outcome.logs,
      calls: outcome.calls,
    },
    isError: true,
  };
}

/**
 * Runs a program for the hub's caller: inner calls go through the hub's one call path (scope, pins,
 * timeouts, records linked to this run); the answer through the response budget.
 */
export async function runCode(
  hub: Hub,
  input: RunCodeInput,
  options: RunCodeOptions = {},
): Promise<CallToolResult> {
  const run = newRunId();
  const started = Date.now();
  const t0 = performance.now();
  const deadline = t0 + input.timeoutMs;
  const outcome = await runSandboxed(input.code, {
    limits: { ...DEFAULT_LIMITS, ...options.limits, timeoutMs: input.timeoutMs },
    signal: options.signal,
    pool: pool ??= new SandboxPool(),
    call: async (name, args, signal) => {
      const entry = await toolInScope(hub, name);
      const left = Math.max(1, Math.ceil(deadline - performance.now()));
      return callValue(
        await hub.call(entry, args, { via: "code", signal, timeoutMs: left, run, trace: options.trace }),
      );
    },
  });
  options.trace?.event("mcphub.code.run", {
    "mcphub.code.calls": outcome.calls,
    ...(outcome.limit ? { "mcphub.code.limit": outcome.limit } : {}),
  });
  const result = outcomeResult(outcome);
  const finalized = await hub.finalizeOther(result as Record<string, unknown>, {
    server: "mcphub",
    tool: RUN_CODE,
    namespaced: RUN_CODE,
  });
  hub.recordOwn(RUN_CODE, {
    via: options.via ?? "call_tool",
    run,
    started,
    t0,
    ok: outcome.ok,
    error: outcome.ok ? undefined : outcome.error,
  }, {
    argsBytes: new TextEncoder().encode(input.code).length,
    resultBytes: finalized.originalBytes,
    returnedBytes: finalized.returnedBytes,
    spooled: finalized.spooled,
  });
  return finalized.result;
}

/** Options of {@linkcode codeDeclarations}. */
export interface CodeDeclarationsOptions {
  /** Declare only the tools a search for this returns. */
  query?: string;
  /** @default 24576 */
  maxBytes?: number;
}

/** TypeScript declarations of the tools the hub's caller may call (or those a query finds). */
export async function codeDeclarations(hub: Hub, options: CodeDeclarationsOptions = {}): Promise<string> {
  await hub.settled();
  const catalog = await hub.catalogAsync();
  let tools: readonly CatalogTool[] = catalog;
  if (options.query !== undefined && options.query.trim() !== "") {
    const answer = await searchTools(hub, { query: options.query, max_hits: 20 });
    const hits = Array.isArray(answer.matches) ? answer.matches as { namespaced?: string }[] : [];
    const byName = new Map(catalog.map((t) => [t.namespaced, t]));
    tools = hits.map((h) => byName.get(String(h.namespaced))).filter((t) => t !== undefined);
  }
  const declared: DeclaredTool[] = tools.map((t) => ({
    name: t.namespaced,
    description: t.definition.description,
    inputSchema: t.definition.inputSchema,
    outputSchema: t.definition.outputSchema,
  }));
  return toolDeclarations(declared, { maxBytes: options.maxBytes });
}
