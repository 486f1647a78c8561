/**
 * `McpError`, mcphub's own JSON-RPC error class (no SDK import: loaded with the process, and the same class
 * whichever SDK line a peer's error came through).
 *
 * @module
 */
/** Where v2's errors carry their brands (`Symbol.for`: the same in every copy of the v2 packages). */
const BRANDS = Symbol.for("mcp.sdk.errorBrands");

/**
 * A JSON-RPC error, mcphub's own (no SDK class under it): made as v1's `McpError` was (its message
 * prefixed "MCP error N:", `code`, `data`, named "McpError"), and `instanceof` true also for the v2
 * `ProtocolError` (a peer's error: a server's on a downstream connection, the host's on the host side),
 * matched by its brand as v2 matches its own across bundles.
 */
export class McpError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(`MCP error ${code}: ${message}`);
    this.name = "McpError";
  }

  /** A peer's error as it came (no prefix added to its message), as the v2 client hands it on. */
  static asSent(code: number, message: string, data?: unknown): McpError {
    const error = new McpError(code, message, data);
    error.message = message;
    return error;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null) return false;
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    // Only the base class looks further (`instanceof` a subclass stays its own).
    if (this !== McpError) return false;
    const brands = (value as { [BRANDS]?: { has(brand: string): boolean } })[BRANDS];
    return typeof brands?.has === "function" && brands.has("mcp.ProtocolError");
  }
}
