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
