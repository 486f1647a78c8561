/**
 * The one call path every proxied call goes through: call → time → finalize (size check → spool or pass)
 * → record. Mounted tools, `call_tool`, detached calls and code mode all reach a downstream here, parsed
 * or as the bytes the server sent (the fast path), and every outcome is recorded once.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Config } from "../config/mod.ts";
import type { CallRecord as CallEvent, CallVia } from "../intelligence/mod.ts";
import type { CatalogTool } from "../catalog/mod.ts";
import { messageOf, ProtocolError } from "../mcp/errors.ts";
import { McpError } from "../mcp/sdk.ts";
import { CLIENT_CAPABILITIES_KEY } from "../mcp/light.ts";
import type { CallToolResult, Progress } from "../mcp/sdk.ts";
import {
  CallTimeoutError,
  type Downstream,
  OutcomeUnknownError,
  ServerUnavailableError,
} from "../downstream/downstream.ts";
import { type Finalized, type FinalizeOptions, finalizeRawResult, finalizeResult } from "./finalize.ts";
import { RawResult } from "../json/raw_json.ts";
import { namespaceResultUris } from "./uris.ts";
import type { OperationError, ServerOperation, Telemetry } from "../telemetry/mod.ts";

/** Options of {@linkcode Hub.call}. */
export interface HubCallOptions {
  via: CallVia;
  signal?: AbortSignal;
  /** Caller's `timeout_ms`; can only shorten `call_timeout`. */
  timeoutMs?: number;
  onProgress?: (progress: Progress) => void;
  /**
   * The caller can relay a result as bytes: the answer may be a {@linkcode RawResult} (the fast path),
   * measured, spooled and recorded exactly as a parsed one. @default false
   */
  raw?: boolean;
  /**
   * A call made by code (run_code): the result goes to the code whole, not through the response budget
   * (only what the code returns reaches the agent, and that is budgeted), and the record names the run.
   */
  run?: string;
  /** The host request this call serves: the parent of the downstream call's span. */
  trace?: ServerOperation;
  /**
   * The client capabilities a 2026-07-28 host's request declared (its `_meta` envelope): the downstream
   * request of a 2026-07-28 server declares them in place of the gateway's own, so the server asks only
   * for the input this host can give.
   */
  clientCapabilities?: Record<string, unknown>;
}

/** What the call path reads of the hub, at the time of the call. */
export interface CallPath {
  downstream(server: string): Downstream | undefined;
  config: Config;
  agent?: string;
  /** Where oversized results go, and how a failure to store one is reported. */
  finalize?: Pick<FinalizeOptions, "spool" | "warn">;
  /** Spans and durations (see telemetry/); undefined = none. */
  telemetry?: Telemetry;
  onCall?: (event: CallEvent) => void;
  log: (line: string) => void;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * Calls a catalog tool through the one result path: call, time, finalize (spool an oversized result),
 * record. Downstream `isError` results pass through unchanged; a JSON-RPC error from the server is rethrown
 * with its code, message and data.
 */
export async function callThrough(
  hub: CallPath,
  entry: CatalogTool,
  args: Record<string, unknown>,
  options: HubCallOptions,
): Promise<CallToolResult | RawResult> {
  const d = hub.downstream(entry.server);
  if (!d) throw new Error(`server "${entry.server}" is not configured`);
  const limit = hub.config.callTimeoutMs;
  const timeoutMs = options.timeoutMs !== undefined ? Math.min(options.timeoutMs, limit) : limit;
  const limitName = options.timeoutMs !== undefined && options.timeoutMs < limit
    ? "timeout_ms"
    : "call_timeout";
  const started = Date.now();
  const t0 = performance.now();
  const argsBytes = byteLength(JSON.stringify(args));
  if (d.toolsFromCache) {
    // Listed from the cache: once the server is up, the tool must still be among its live tools.
    await d.ready;
    if (d.state === "connected" && !d.tools.some((t) => t.name === entry.tool)) {
      throw new ProtocolError(
        -32602,
        `Tool "${entry.namespaced}" is no longer offered by server "${entry.server}" (it was in its last ` +
          "known tool list). Call list_servers or search_tools to see the available tools.",
      );
    }
  }
  let result: CallToolResult | RawResult;
  let transportError: string | undefined;
  const op = hub.telemetry?.client(options.trace, {
    method: "tools/call",
    server: entry.server,
    tool: entry.tool,
    transport: d.config.url === undefined ? "pipe" : "tcp",
  });
  try {
    result = await d.callTool(entry.tool, args, {
      signal: options.signal,
      timeoutMs,
      onProgress: options.onProgress,
      raw: options.raw,
      meta: options.clientCapabilities
        ? { ...op?.meta, [CLIENT_CAPABILITIES_KEY]: options.clientCapabilities }
        : op?.meta,
      onRequestId: op && ((id) => op.requestId(id)),
    });
    op?.end(result.isError === true ? { type: "tool_error" } : undefined);
  } catch (error) {
    if (op) {
      const failure = clientError(error);
      if (failure.message !== undefined) failure.message = d.redact(failure.message);
      op.end(failure);
    }
    if (error instanceof ServerUnavailableError) {
      return errorResult(`${error.message}. Call list_servers for the state of every server.`);
    }
    if (error instanceof OutcomeUnknownError) {
      transportError = error.message;
      result = errorResult(
        `Outcome unknown: the connection to server "${entry.server}" broke during the call to ${entry.namespaced} ` +
          `(${error.message}). The request was not retried, because it may already have taken effect; ` +
          (hub.downstream(entry.server) === d
            ? `the connection is being restored for future calls.`
            : `a reload of the config stopped or reconnected the server meanwhile.`),
      );
    } else if (error instanceof CallTimeoutError) {
      transportError = `timed out after ${timeoutMs}ms`;
      result = errorResult(
        `The call to ${entry.namespaced} timed out after ${timeoutMs}ms (${limitName} = ${timeoutMs}ms) and was ` +
          `cancelled downstream; its outcome is unknown and it was not retried.`,
      );
    } else {
      record(hub, entry, options, started, t0, false, messageOf(error), argsBytes, 0, 0, false);
      throw asProtocolError(error);
    }
  }
  // Resource links and embedded resources point through the gateway (mcphub://SERVER/...); a
  // `namespace: false` server's stay as they are, unless they claim mcphub:// (then under its name).
  {
    const bare = d.config.namespace === false;
    if (!(result instanceof RawResult)) result = namespaceResultUris(entry.server, result, { bare });
    else if (result.mayHaveResources()) {
      const parsed = result.parse() as unknown as CallToolResult;
      const renamed = namespaceResultUris(entry.server, parsed, { bare });
      if (renamed !== parsed) {
        // Stored from here on as parsed: what was spilled as it arrived goes.
        result.raw.discardSpill();
        result = renamed;
      }
    }
  }
  const finalizeOptions: FinalizeOptions = {
    ...hub.finalize,
    budget: hub.config.responseBudget,
    verbatim: hub.config.verbatim || options.run !== undefined,
    server: entry.server,
    tool: entry.tool,
    namespaced: entry.namespaced,
    agent: hub.agent,
  };
  const finalized = result instanceof RawResult
    ? await finalizeRawResult(result, finalizeOptions)
    : await finalizeResult(result, finalizeOptions);
  const isError = result.isError === true;
  if (finalized.spooled) {
    options.trace?.event("mcphub.result.spooled", {
      "mcphub.result.bytes": finalized.originalBytes,
      "mcphub.result.returned_bytes": finalized.returnedBytes,
    });
  }
  record(
    hub,
    entry,
    options,
    started,
    t0,
    !isError,
    transportError ?? (isError ? firstText(result) : undefined),
    argsBytes,
    finalized.originalBytes,
    // A call made by code returns to the code: nothing of it reaches the agent.
    options.run !== undefined ? 0 : finalized.returnedBytes,
    finalized.spooled,
  );
  return finalized.result;
}

/**
 * A non-tool result (`resources/read`) through the same budget as tool results: over it, stored
 * whole and answered with a receipt (paged with get_result, re-checked against scope as `tool`).
 */
export function finalizeOther(
  hub: CallPath,
  result: Record<string, unknown>,
  meta: { server: string; tool: string; namespaced: string },
): Promise<Finalized> {
  return finalizeResult(result as CallToolResult, {
    ...hub.finalize,
    budget: hub.config.responseBudget,
    verbatim: hub.config.verbatim,
    ...meta,
    agent: hub.agent,
  });
}

/** Records one finished call (its error redacted first). */
export function record(
  hub: CallPath,
  entry: Pick<CatalogTool, "server" | "tool" | "namespaced">,
  { via, run }: Pick<HubCallOptions, "via" | "run">,
  started: number,
  t0: number,
  ok: boolean,
  error: string | undefined,
  argsBytes: number,
  resultBytes: number,
  returnedBytes: number,
  spooled: boolean,
): void {
  // Redact, then cut: whatever stores or shows the error cuts it, so it must hold no secret first.
  if (error !== undefined) error = hub.downstream(entry.server)?.redact(error) ?? error;
  try {
    hub.onCall?.({
      ts: started,
      server: entry.server,
      tool: entry.tool,
      namespaced: entry.namespaced,
      durationMs: Math.round(performance.now() - t0),
      ok,
      error,
      argsBytes,
      resultBytes,
      returnedBytes,
      spooled,
      agent: hub.agent,
      via,
      ...(run !== undefined ? { runId: run } : {}),
    });
  } catch (error) {
    hub.log(`recording a call failed: ${messageOf(error)}`);
  }
}

/** A failed downstream call's `error.type`: its JSON-RPC code, or the gateway's class of failure. */
function clientError(error: unknown): OperationError {
  if (error instanceof CallTimeoutError) return { type: "timeout", message: error.message };
  if (error instanceof OutcomeUnknownError) return { type: "outcome_unknown", message: error.message };
  if (error instanceof ServerUnavailableError) return { type: "unavailable" };
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "number" && Number.isInteger(code)) {
    return { type: String(code), code, message: (error as Error).message };
  }
  return { type: "_OTHER" };
}

/** An `isError` tool result with one text block. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** Units of a relayed error result's first text kept for its record. */
const RAW_ERROR_TEXT_UNITS = 64 * 1024;

function firstText(result: CallToolResult | RawResult): string | undefined {
  const content = result instanceof RawResult ? result.preview(RAW_ERROR_TEXT_UNITS).content : result.content;
  for (const block of content ?? []) {
    if (block.type === "text") return block.text;
  }
  return undefined;
}

/**
 * A downstream JSON-RPC error as the gateway's own error with the same code, message and data: the
 * SDK's McpError carries an "MCP error N: " prefix in its message, which the host's client would double.
 */
function asProtocolError(error: unknown): unknown {
  if (!(error instanceof McpError)) return error;
  // Servers built on the SDK put the prefix into the message on the wire too: strip every repeat.
  const message = error.message.replace(/^(MCP error -?\d+: )+/, "");
  return new ProtocolError(error.code, message, { cause: error }, error.data);
}
