/** One downstream server from `servers:` in mcphub.yaml, after validation and `${VAR}` expansion. */
export interface ServerConfig {
  /** The key under `servers:`; never contains `__`, never `mcphub`. */
  name: string;
  /** stdio: the program to start. Exactly one of `command` / `url` is set. */
  command?: string;
  /** @default [] */
  args: string[];
  /** Merged over the inherited environment when the process starts. @default {} */
  env: Record<string, string>;
  /** Working directory, `~` already expanded. */
  cwd?: string;
  /** remote: the endpoint URL. */
  url?: string;
  /** @default "http" */
  transport: "http" | "sse";
  /** @default {} */
  headers: Record<string, string>;
  /** remote: how mcphub logs in with OAuth; undefined = discovered on a 401, with dynamic client registration. */
  oauth?: OAuthConfig;
  /** @default true */
  enabled: boolean;
  /**
   * false: its tools, prompts and resource URIs are published unchanged (no `server__` prefix, no
   * `mcphub://` URI); a name that collides with another server's or a meta-tool is not published
   * and the server's `error` names both. undefined = namespaced.
   */
  namespace?: false;
  description?: string;
  /** @default [] */
  tags: string[];
  /** At most 8 one-line hints of at most 256 bytes each. @default [] */
  useWhen: string[];
  /** Downstream tool name -> hints. @default {} */
  toolUseWhen: Record<string, string[]>;
  /**
   * stdio: which of the gateway's variables the server inherits beyond the essentials; undefined =
   * the top-level `inherit_env`.
   */
  inheritEnv?: "all" | string[];
  /** Names of the variables this entry reads through `${VAR}` (whether expanded or not). */
  envVars?: string[];
  /** How changed tool definitions are handled. @default "changes" */
  trust?: "changes" | "pin" | "off";
  /** Names of the variables its OAuth `client_secret` reads: the gateway's, never passed to a server. */
  privateVars?: string[];
  /** Values substituted for `${VAR}` references: redacted wherever the server is shown or logged. */
  secrets?: string[];
  /**
   * Why this entry cannot be started (`file:line:col: key: problem`, e.g. an unset `${VAR}`), when the
   * config was loaded with `serverErrors: "fail-server"`: the server is shown as failed, the rest served.
   */
  loadError?: string;
}

/** `oauth:` of a remote server. Tokens are never in the config: `mcphub auth login` keeps them in the store. */
export interface OAuthConfig {
  /** A pre-registered client; undefined = dynamic client registration. */
  clientId?: string;
  /** The pre-registered client's secret (write it as `${VAR}`). */
  clientSecret?: string;
  /** Scopes to ask for; [] = what the server advertises. @default [] */
  scopes: string[];
  /** `client_credentials`: machine-to-machine, no browser (needs client_id and client_secret). @default "authorization_code" */
  grant: "authorization_code" | "client_credentials";
  /** Fixed port of the loopback redirect (`http://127.0.0.1:PORT/callback`) for clients registered with one; undefined = a random free port. */
  redirectPort?: number;
}

/** One entry of `agents:` in mcphub.yaml. */
export interface AgentConfig {
  name: string;
  /** Server names in scope; undefined = all, [] = none. */
  servers?: string[];
  /** Exact public `server__tool` names in scope; undefined = all tools of the servers in scope. */
  tools?: string[];
  /** Overrides the global `pin` in lazy mode. */
  pin?: string[];
  /** Bytes of mounted downstream tool definitions; 0 = meta-tools only; undefined = no limit. */
  toolSchemaBudget?: number;
  /** `code_mode: true` offers run_code to this agent even when the top level leaves it off. */
  codeMode?: boolean;
  /** The HTTP listener's bearer token as written: `${VAR}` or `sha256:HEX` (resolved by the listener). */
  token?: string;
  /** `quota:` over the top-level `agent_quota:` (HTTP listener). */
  quota?: Partial<AgentQuota>;
}

/** What one agent may take of an HTTP listener (`agent_quota:` and `agents.NAME.quota:`). */
export interface AgentQuota {
  /** Sessions open at once; undefined = an equal share of the listener's session limit. */
  sessions?: number;
  /** `tools/call` requests running at once, across the agent's sessions. @default 64 */
  concurrentCalls: number;
  /** JSON-RPC requests per `window`. @default 60000 */
  requests: number;
  /** @default 60000 */
  windowMs: number;
}

/** `listen_limits:` of mcphub.yaml: what the HTTP listener's connections may take. */
export interface ListenLimits {
  /** Connections open at once. @default 1024 */
  maxConnections: number;
  /** Connections that have not completed a request yet. @default 256 */
  maxPending: number;
  /** A request's headers and body must have arrived this long after it started. @default 30000 */
  headerTimeoutMs: number;
  /** A keep-alive connection with no request in progress is closed after this. @default 300000 (longer than HTTP clients keep pooled connections: a client never picks one as it closes) */
  idleTimeoutMs: number;
  /** Bytes of resumable events one session keeps (0 = none kept). @default 1048576 */
  eventsPerSession: number;
  /** Bytes of resumable events all sessions keep together (0 = none kept). @default 33554432 */
  eventsTotal: number;
  /** A server's requests to the host (sampling, elicitation, roots) relayed at once. @default 8 */
  relayInFlight: number;
  /** A server's requests to the host relayed per {@linkcode relayWindowMs}. @default 64 */
  relayRequests: number;
  /** @default 60000 */
  relayWindowMs: number;
}

/** A loaded, validated mcphub.yaml. */
export interface Config {
  /** Absolute path of the file it was loaded from; undefined for the embedded default. */
  path?: string;
  version: 1;
  /** @default "all" (new configs written by `mcphub init` say `auto`) */
  expose: "all" | "lazy" | "auto";
  /** `expose: auto`: tokens of advertised tool definitions mounted whole. @default 20000 */
  exposeBudgetTokens?: number;
  /** `server`, `server__*` or `server__tool`. @default [] */
  pin: string[];
  /** Bytes; 0 = unlimited, else >= 512. @default 32768 */
  responseBudget: number;
  /** @default false */
  verbatim: boolean;
  /** @default 30000 */
  connectTimeoutMs: number;
  /** @default 1800000 */
  callTimeoutMs: number;
  /**
   * How long `tools/list` and discovery wait at start for servers with no cached tool list to connect
   * or fail; 0 = never wait. @default 5000
   */
  startupWaitMs: number;
  /** Record every proxied call in the store. @default true */
  record: boolean;
  /** Offer the `run_code` meta-tool (code mode). @default false */
  codeMode: boolean;
  /** Which of the gateway's variables stdio servers inherit beyond the essentials. @default [] */
  inheritEnv?: "all" | string[];
  /**
   * The store: a SQLite file path or a `postgres://` URL (expanded); `--db` and `$MCPHUB_DB` win.
   * undefined = the default file.
   */
  store?: string;
  /** Names of the variables `store:` reads through `${VAR}`: never passed to a server. */
  storeVars?: string[];
  /** `mcp serve` listens here over HTTP (`HOST:PORT`) instead of stdio; undefined = stdio. */
  listen?: string;
  /**
   * The bearer token `GET /metrics` on the listener requires: `${VAR}` or `sha256:HEX`, as an agent's
   * `token:`. undefined = /metrics needs no token where the listener needs none, else it is refused.
   */
  metricsToken?: string;
  /** Host names besides loopback names that HTTP requests may carry in Host and Origin. @default [] */
  allowedHosts: string[];
  /** An HTTP session with no request for this long is ended. @default 1800000 */
  sessionIdleMs: number;
  /** `listen_limits:`: the HTTP listener's connection limits. */
  listenLimits: ListenLimits;
  /** `agent_quota:`: every agent's quota unless its own `quota:` says otherwise. */
  agentQuota: AgentQuota;
  /** In file order. */
  servers: ServerConfig[];
  /** In file order. */
  agents: AgentConfig[];
}
