/**
 * JSON-RPC errors the gateway answers with. Not the SDK's McpError: that one
 * prefixes its message with "MCP error N:", and the client's prefix doubles it.
 *
 * @module
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

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
