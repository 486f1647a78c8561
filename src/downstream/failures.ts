/**
 * How a downstream server fails and comes back: its states, the restart policy with its backoff, and the
 * errors a call or a start raises (the hub tells the caller which of them happened).
 *
 * @module
 */
import { MODERN_VERSION, UNSUPPORTED_VERSION } from "../mcp/light.ts";

/** Where a downstream server is in its life. */
export type DownstreamState =
  | "disabled"
  | "connecting"
  | "connected"
  | "backoff"
  | "failed"
  | "needs_auth"
  | "closed";

/** When and how often a failing server is restarted. */
export interface RestartPolicy {
  /** First retry delay; doubles per consecutive failure. @default 500 */
  baseMs: number;
  /** Longest delay between attempts. @default 30000 */
  maxMs: number;
  /** Consecutive failures after which the server is marked crash-looping and left down; 0 = never restart. @default 8 */
  maxFailures: number;
  /** Uptime after which the failure count resets. @default 60000 */
  stableMs: number;
}

/** The default {@linkcode RestartPolicy}. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  baseMs: 500,
  maxMs: 30_000,
  maxFailures: 8,
  stableMs: 60_000,
};

/** The delay before restart attempt `failures` (1-based): exponential, capped, with jitter in [50%, 100%]. */
export function backoffDelay(failures: number, policy: RestartPolicy, random = Math.random): number {
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(raw * (0.5 + random() / 2));
}

/** The call failed in a way that leaves its outcome unknown (the connection broke). */
export class OutcomeUnknownError extends Error {
  override name = "OutcomeUnknownError";
}

/** The call ran past its time limit. */
export class CallTimeoutError extends Error {
  override name = "CallTimeoutError";
}

/** The server is not connected (connecting failed, backing off, crash-looping or closed). */
export class ServerUnavailableError extends Error {
  override name = "ServerUnavailableError";
  constructor(message: string, readonly state: DownstreamState) {
    super(message);
  }
}

/** A start failure that retrying cannot fix (no such command, not permitted). */
export class PermanentError extends Error {
  override name = "PermanentError";
}

/**
 * A server's refusal of the 2025 opening naming only revisions mcphub does not speak (see mcp/era.ts):
 * permanent, named for what it is.
 */
export function refusalError(
  refusal: { supported: string[]; requested?: string },
  cause: unknown,
): PermanentError {
  return new PermanentError(
    `the server refused MCP ${refusal.requested ?? "2025-11-25"} (${UNSUPPORTED_VERSION} unsupported ` +
      `protocol version) and supports only ${refusal.supported.join(", ") || "revisions it did not name"}, ` +
      `none of which mcphub speaks (it speaks 2025-11-25 and older, and ${MODERN_VERSION})`,
    { cause },
  );
}
