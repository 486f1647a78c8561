/**
 * JSON-RPC errors the gateway answers with, and the error codes of both protocol revisions as the
 * gateway's own constants (no SDK import: v1's `ErrorCode` and v2's `ProtocolErrorCode` differ in what
 * they name, see docs/v2-migration.md). Not the SDK's McpError: that one prefixes its message with
 * "MCP error N:", and the client's prefix doubles it.
 *
 * @module
 */

/**
 * Error codes: JSON-RPC's, the two the gateway reports its own local failures with (v1's
 * `ConnectionClosed` and `RequestTimeout`, which v2 makes `SdkError`s with string codes), and MCP's.
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The connection closed before the answer (a local failure: never sent by a peer). */
  ConnectionClosed: -32000,
  /** No answer within the deadline (a local failure: never sent by a peer). */
  RequestTimeout: -32001,
  /** A resource that does not exist (MCP). */
  ResourceNotFound: -32002,
  /** `Mcp-Method` / `Mcp-Name` differ from the body (2026-07-28, over HTTP). */
  HeaderMismatch: -32020,
  /** The request's envelope lacks a client capability the server needs (2026-07-28). */
  MissingRequiredClientCapability: -32021,
  /** A protocol revision the peer does not serve; `data.supported` names those it does (2026-07-28). */
  UnsupportedProtocolVersion: -32022,
  /** The server needs the user to visit a URL first; `data.elicitations` names them (2025-11-25). */
  UrlElicitationRequired: -32042,
} as const;

/** A JSON-RPC error response: the SDK server sends `code` and `message` as they are. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
  constructor(readonly code: number, message: string, options?: ErrorOptions, readonly data?: unknown) {
    super(message, options);
  }
}

/** Throws the protocol's InvalidParams error (-32602). */
export function invalidParams(message: string): never {
  throw new ProtocolError(ErrorCode.InvalidParams, message);
}

/** Throws the protocol's InvalidRequest error (-32600). */
export function invalidRequest(message: string): never {
  throw new ProtocolError(ErrorCode.InvalidRequest, message);
}

/** A `tools/call` result that is not one (checked on the fast path, where the SDK's schema is skipped). */
export class InvalidResultError extends TypeError {
  override name = "InvalidResultError";
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The HTTP status an SDK transport's error carries: v2's `SdkHttpError` has it as `status` (its `code` is a
 * string), v1's `StreamableHTTPError` as a numeric `code`. Undefined for any other error.
 */
export function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { status, code } = error as { status?: unknown; code?: unknown };
  if (typeof status === "number") return status;
  return typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
}
