/**
 * One server behind the gateway: spawn (stdio) or dial (Streamable HTTP, SSE), supervise with backoff, list
 * and call; the stdio client end with its raw fast path; the server's inherited environment; the
 * notification gate. Data leaves here toward the server and comes back up to the hub.
 *
 * @module
 */
export {
  backoffDelay,
  DEFAULT_RESTART_POLICY,
  type DownstreamState,
  type RestartPolicy,
} from "./failures.ts";
export { ESSENTIAL_ENV, serverEnvironment } from "./environment.ts";
