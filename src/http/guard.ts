/**
 * What every HTTP request passes before it reaches a session: header size, `Host` and `Origin`
 * (DNS-rebinding protection) and the bearer token that selects the agent.
 *
 * @module
 */
import { type AgentConfig, isLoopback, sha256Hex, tokenHash } from "../config/mod.ts";

/** Loopback names a request may always carry in `Host` and `Origin`. */
export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/** A request refused before any MCP handling: the response to send. */
export class Refusal extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
  }

  /** The refusal as a JSON response (`{"error": message}`); no request content is echoed. */
  response(): Response {
    return new Response(JSON.stringify({ error: this.message }) + "\n", {
      status: this.status,
      headers: { "content-type": "application/json", ...this.headers },
    });
  }
}

/** The host name of a `Host` header value (`example.com:8080` → `example.com`, `[::1]:80` → `[::1]`). */
export function hostOf(value: string): string {
  const text = value.trim().toLowerCase();
  if (text.startsWith("[")) return text.slice(0, text.indexOf("]") + 1);
  const colon = text.indexOf(":");
  return colon === -1 ? text : text.slice(0, colon);
}

/** The host names allowed in `Host`/`Origin`: loopback names, `allowed_hosts`, and a specific bind address. */
export function allowedHosts(bind: string, extra: readonly string[]): Set<string> {
  const hosts = new Set<string>([...LOOPBACK_HOSTS, ...extra.map((h) => h.toLowerCase())]);
  const wildcard = bind === "0.0.0.0" || bind === "::" || bind === "";
  if (!wildcard) hosts.add(bind.includes(":") ? `[${bind.toLowerCase()}]` : bind.toLowerCase());
  return hosts;
}

/** Refuses a request whose `Host` or `Origin` names a host that is not allowed (403). */
export function checkHostAndOrigin(request: Request, allowed: ReadonlySet<string>): void {
  const host = request.headers.get("host");
  if (host === null || !allowed.has(hostOf(host))) {
    throw new Refusal(
      403,
      "Forbidden: the Host header names a host this gateway does not serve (DNS-rebinding protection); " +
        "add the name to allowed_hosts in mcphub.yaml if it is yours",
    );
  }
  const origin = request.headers.get("origin");
  if (origin === null) return;
  let originHost: string | undefined;
  try {
    const url = new URL(origin);
    originHost = url.protocol === "http:" || url.protocol === "https:" ? hostOf(url.host) : undefined;
  } catch {
    originHost = undefined;
  }
  if (originHost === undefined || !allowed.has(originHost)) {
    throw new Refusal(
      403,
      "Forbidden: the Origin header names a site this gateway does not serve (DNS-rebinding protection); " +
        "add its host name to allowed_hosts in mcphub.yaml if it is yours",
    );
  }
}

/** Refuses a request whose header names and values exceed `limit` bytes in total (431). */
export function checkHeaderSize(request: Request, limit: number): void {
  let bytes = 0;
  // forEach, not for…of: see headerPairs (server.ts).
  request.headers.forEach((value, name) => bytes += name.length + value.length + 4);
  if (bytes > limit) {
    throw new Refusal(431, `Request headers are ${bytes} bytes, over the limit of ${limit} bytes`);
  }
}

/** Constant-time comparison of two equal-length hex strings. */
export function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const CHALLENGE = 'Bearer realm="mcphub"';

/**
 * Who a request is: the agent its bearer token belongs to. With tokens configured every request needs
 * one, and `/mcp/AGENT` needs that agent's own; a missing or wrong token is 401 with `WWW-Authenticate`,
 * never the unscoped view. With no tokens (loopback only) `/mcp` is the default scope and `/mcp/AGENT`
 * that agent's.
 */
export class TokenGuard {
  #tokens: { hash: string; agent: string }[];
  #agents: Set<string>;
  #defaultAgent?: string;
  #required: boolean;

  private constructor(
    tokens: { hash: string; agent: string }[],
    agents: string[],
    defaultAgent?: string,
    required = false,
  ) {
    this.#tokens = tokens;
    this.#agents = new Set(agents);
    this.#defaultAgent = defaultAgent;
    this.#required = required || tokens.length > 0;
  }

  /**
   * Resolves every agent's `token:` from the environment.
   *
   * @throws {RangeError} naming the file, the key and the fix (an unset variable, a short token, or
   *   two agents with the same token)
   */
  static async create(
    agents: readonly AgentConfig[],
    env: { get(key: string): string | undefined },
    file: string | undefined,
    defaultAgent?: string,
    reload?: { required: boolean; problem: (message: string) => void },
  ): Promise<TokenGuard> {
    const tokens: { hash: string; agent: string }[] = [];
    // On a reload a bad entry fails closed: that agent (and a twin) gets no token; the others are served.
    const refused = new Set<string>();
    const fail = (message: string, ...names: string[]) => {
      if (!reload) throw new RangeError(message);
      reload.problem(`${message}; refusing agents.${names.join(" and agents.")} until it is fixed`);
      for (const name of names) refused.add(name);
    };
    for (const agent of agents) {
      let hash: string | undefined;
      try {
        hash = await tokenHash(agent, env, file);
      } catch (error) {
        fail((error as Error).message, agent.name);
        continue;
      }
      if (hash === undefined) continue;
      const twin = tokens.find((t) => t.hash === hash);
      if (twin) {
        fail(
          `${
            file ?? "mcphub.yaml"
          }: agents.${agent.name}.token: the same token as agents.${twin.agent}.token; ` +
            "a token selects its agent, so give each agent its own",
          agent.name,
          twin.agent,
        );
        continue;
      }
      tokens.push({ hash, agent: agent.name });
    }
    return new TokenGuard(
      tokens.filter((t) => !refused.has(t.agent)),
      agents.map((a) => a.name),
      defaultAgent,
      (reload?.required ?? false) || refused.size > 0,
    );
  }

  /** True when requests must carry a token. */
  get required(): boolean {
    return this.#required;
  }

  /** True when `hash` (SHA-256 hex of a token) is still `agent`'s token; with no tokens required, always. */
  accepts(agent: string | undefined, hash: string | undefined): boolean {
    if (!this.required) return hash === undefined && (agent === undefined || this.#agents.has(agent));
    return hash !== undefined && this.#tokens.some((t) => t.agent === agent && sameHex(t.hash, hash));
  }

  /**
   * Refuses serving a non-loopback address without tokens.
   *
   * @throws {RangeError} with the fix
   */
  checkBind(hostname: string, file: string | undefined): void {
    if (isLoopback(hostname) || this.required) return;
    throw new RangeError(
      `listening on ${hostname} (not loopback) requires authentication: set a token for each agent in ` +
        `${file ?? "mcphub.yaml"} (agents.NAME.token: \${VAR}), or listen on 127.0.0.1`,
    );
  }

  /**
   * The agent a request acts as (undefined = unscoped).
   *
   * @param pathAgent the `AGENT` of `/mcp/AGENT`, if any
   * @throws {Refusal} 401 for a missing or wrong token (and, with tokens, for an unknown agent: the same
   *   answer as a real one's), 404 for an unknown agent when no tokens are configured
   */
  async agentOf(request: Request, pathAgent: string | undefined): Promise<string | undefined> {
    return (await this.credentialOf(request, pathAgent)).agent;
  }

  /**
   * The agent a request acts as and the hash of the token that says so (undefined without tokens).
   *
   * @throws {Refusal} as {@linkcode agentOf}
   */
  async credentialOf(
    request: Request,
    pathAgent: string | undefined,
  ): Promise<{ agent: string | undefined; hash?: string }> {
    const header = request.headers.get("authorization");
    // With tokens, an unknown agent is answered as a real one without a valid token (no enumeration).
    if (!this.required && pathAgent !== undefined && !this.#agents.has(pathAgent)) {
      throw new Refusal(404, "Not found: no such agent");
    }
    if (!this.required) {
      if (header !== null) {
        throw new Refusal(
          401,
          "Unauthorized: this gateway has no tokens configured; remove the Authorization header",
          { "www-authenticate": `${CHALLENGE}, error="invalid_token"` },
        );
      }
      return { agent: pathAgent ?? this.#defaultAgent };
    }
    const match = header === null ? null : /^Bearer +([\x21-\x7e]+)\s*$/i.exec(header);
    if (!match) {
      throw new Refusal(401, "Unauthorized: send Authorization: Bearer TOKEN", {
        "www-authenticate": CHALLENGE,
      });
    }
    const hash = await sha256Hex(match[1]);
    let agent: string | undefined;
    for (const entry of this.#tokens) if (sameHex(entry.hash, hash)) agent = entry.agent;
    if (agent === undefined || (pathAgent !== undefined && pathAgent !== agent)) {
      throw new Refusal(401, "Unauthorized: the token is not valid here", {
        "www-authenticate": `${CHALLENGE}, error="invalid_token"`,
      });
    }
    return { agent, hash };
  }
}
