/**
 * The 2026-07-28 revision's names (era.ts is its downstream side, host_era.ts its host side): what the
 * gateway names before either loads (start-up time, see `light.ts`).
 *
 * @module
 */
import { ErrorCode } from "./errors.ts";

/** The 2026-07-28 revision: the stateless core. */
export const MODERN_VERSION = "2026-07-28";
/** The `_meta` key of a request's protocol version (2026-07-28). */
export const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
/** The `_meta` key of a request's client capabilities (2026-07-28). */
export const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** The `_meta` key of a request's client info (2026-07-28, optional). */
export const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
/** The `_meta` key of the server's info in a `server/discover` result. */
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
/** The error code of an unsupported protocol version (2026-07-28). */
export const UNSUPPORTED_VERSION = ErrorCode.UnsupportedProtocolVersion;

/**
 * The `_meta` key the gateway puts on each server-to-client request it makes of a 2026-07-28 server's
 * `input_required` round (era.ts): `{key, round, of, bare?}`, the input request's key in the server's
 * `inputRequests`, the round's id and how many requests it has. The host side (host_era.ts) reads it to
 * answer a 2026-07-28 host `input_required` with the server's own keys, all of a round at once; it is
 * removed from every request before a host sees it ({@linkcode withoutInputKey}).
 */
export const INPUT_KEY = "io.mcphub/inputRequest";

/** Where a relayed request came from: one input request of a 2026-07-28 server's round. */
export interface InputKey {
  key: string;
  round: string;
  of: number;
  /** The server's input request had no `params` (a 2026-07-28 host gets it without, as sent). */
  bare?: true;
}

/** The {@linkcode INPUT_KEY} marker of a request's params, if it has a well-formed one. */
export function inputKeyOf(params: unknown): InputKey | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const mark = meta?.[INPUT_KEY] as Partial<InputKey> | undefined;
  if (typeof mark?.key !== "string" || typeof mark.round !== "string" || typeof mark.of !== "number") {
    return undefined;
  }
  return mark as InputKey;
}

/** A message without the {@linkcode INPUT_KEY} marker (its params' `_meta` gone when nothing else was in it). */
export function withoutInputKey<M>(message: M): M {
  const m = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
  const meta = m?.params?._meta;
  if (typeof m?.method !== "string" || !meta || !(INPUT_KEY in meta)) return message;
  const { [INPUT_KEY]: _, ...rest } = meta;
  const { _meta: __, ...params } = m.params!;
  return { ...m, params: Object.keys(rest).length ? { ...params, _meta: rest } : params } as M;
}
