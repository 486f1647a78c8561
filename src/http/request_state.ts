/**
 * The sealed `requestState` of a 2026-07-28 multi round-trip request (MRTR) served over HTTP: what the
 * gateway hands a host with `input_required` and takes back in its retry. Inside is the id of the open
 * continuation, the replica that holds the call, the agent it was issued to, the request it continues
 * (method, tool or prompt name or resource URI, a SHA-256 digest of the arguments with keys sorted) and an
 * expiry; the whole is signed with HMAC-SHA-256 under a key kept in the store (one key for every replica
 * on it, never printed). Any replica can check a retry's state before anything runs: a forged or altered
 * state, another agent's, one for another request, or an expired one is refused with its reason.
 *
 * @module
 */
import { canonicalJson } from "../mcp/mod.ts";

/** What a sealed state carries. */
export interface SealedState {
  /** The continuation's id (the rendezvous row's key). */
  id: string;
  /** The replica holding the open call. */
  owner: string;
  /** The agent it was issued to ("" = the unscoped view). */
  agent: string;
  expiresAt: number;
}

/** A request as the seal binds it. */
export interface BoundRequest {
  method?: unknown;
  params?: Record<string, unknown>;
}

const PREFIX = "mcphub1";
const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** What the seal binds of a request: its method, its name (tool, prompt) or URI, its arguments' digest. */
async function binding(request: BoundRequest): Promise<{ m: string; n: string; d: string }> {
  const p = request.params ?? {};
  const name = p.name ?? p.uri ?? null;
  const digest = await crypto.subtle.digest("SHA-256", enc.encode(canonicalJson(p.arguments ?? null)));
  return { m: String(request.method), n: canonicalJson(name), d: b64url(new Uint8Array(digest)) };
}

/** The refusals of {@linkcode StateSeal.open}, each saying what was wrong and that nothing ran. */
export const REFUSED = {
  forged:
    "requestState was not issued by this gateway (its seal does not verify: forged, altered, or sealed " +
    "under another store's key); nothing was run",
  agent: "requestState was issued to another agent; nothing was run",
  request: "requestState belongs to another request (its method, name or arguments differ); nothing was run",
  expired: "requestState has expired (a continuation waits a limited time for the host's retry, then its " +
    "call is cancelled); nothing was run: start the call again",
} as const;

/** Seals and opens the states of one agent on one replica. */
export class StateSeal {
  readonly #key: CryptoKey;
  readonly #agent: string;
  readonly #replica: string;
  readonly #clock: () => number;

  private constructor(key: CryptoKey, agent: string, replica: string, clock: () => number) {
    this.#key = key;
    this.#agent = agent;
    this.#replica = replica;
    this.#clock = clock;
  }

  /** A seal under `secret` (the store's key) for `agent` ("" = unscoped) on `replica`. */
  static async create(
    secret: Uint8Array<ArrayBuffer>,
    agent: string,
    replica: string,
    clock: () => number = Date.now,
  ): Promise<StateSeal> {
    const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    return new StateSeal(key, agent, replica, clock);
  }

  /** The sealed form of continuation `id` of `request`, valid for `ttlMs`. */
  async seal(id: string, request: BoundRequest, ttlMs: number): Promise<string> {
    const payload = {
      v: 1,
      i: id,
      o: this.#replica,
      a: this.#agent,
      ...await binding(request),
      e: this.#clock() + ttlMs,
    };
    const body = b64url(enc.encode(JSON.stringify(payload)));
    const mac = await crypto.subtle.sign("HMAC", this.#key, enc.encode(`${PREFIX}.${body}`));
    return `${PREFIX}.${body}.${b64url(new Uint8Array(mac))}`;
  }

  /** The state a retry carries, checked: its contents, or why it is refused. */
  async open(token: string, request: BoundRequest): Promise<SealedState | { refused: string }> {
    const parts = token.split(".");
    const mac = parts.length === 3 && parts[0] === PREFIX ? unb64url(parts[2]!) : undefined;
    // 32 bytes in their one canonical spelling (base64's spare bits could otherwise vary).
    if (!mac || mac.length !== 32 || b64url(mac) !== parts[2]) return { refused: REFUSED.forged };
    const ok = await crypto.subtle.verify("HMAC", this.#key, mac, enc.encode(`${PREFIX}.${parts[1]}`));
    if (!ok) return { refused: REFUSED.forged };
    let p: Record<string, unknown>;
    try {
      p = JSON.parse(new TextDecoder().decode(unb64url(parts[1]!)));
    } catch {
      return { refused: REFUSED.forged };
    }
    if (p.a !== this.#agent) return { refused: REFUSED.agent };
    const bound = await binding(request);
    if (p.m !== bound.m || p.n !== bound.n || p.d !== bound.d) return { refused: REFUSED.request };
    if (typeof p.e !== "number" || p.e <= this.#clock()) return { refused: REFUSED.expired };
    return { id: String(p.i), owner: String(p.o), agent: String(p.a), expiresAt: p.e };
  }
}
