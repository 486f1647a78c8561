/**
 * The SDK's OAuthClientProvider over the store: what a remote server's
 * transport uses to attach, refresh and (at login) obtain tokens. In the
 * gateway it never opens a browser: a server that needs a login says so and
 * names the command to run.
 *
 * @module
 */
import type { OAuthConfig } from "../config/mod.ts";
import type { AuthRecord, AuthStore } from "./store.ts";
import { httpStatusOf } from "../mcp/light.ts";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from "../mcp/sdk_auth.ts";

/** The SDK's OAuth client once loaded (see {@linkcode loadAuthSdk}). */
let authSdk: typeof import("../mcp/sdk_auth.ts") | undefined;

/**
 * The SDK's OAuth client (`src/mcp/sdk_auth.ts`), loaded on first use: a gateway without OAuth servers starts
 * without it (it costs start-up time). {@linkcode ServerAuth} starts loading it when it is created.
 */
export function loadAuthSdk(): Promise<typeof import("../mcp/sdk_auth.ts")> {
  return import("../mcp/sdk_auth.ts").then((sdk) => authSdk = sdk);
}

/** The part of a server's config the OAuth client needs. */
export interface AuthTarget {
  name: string;
  url: string;
  oauth?: OAuthConfig;
  /** Static headers sent with every request (login probes the server with them). */
  headers?: Record<string, string>;
  /** The command that logs this server in, as messages show it. @default `mcphub auth login NAME` */
  loginCommand?: string;
}

/** The command that logs `target` in. */
export function loginCommand(target: Pick<AuthTarget, "name" | "loginCommand">): string {
  return target.loginCommand ?? `mcphub auth login ${target.name}`;
}

/** The server needs `mcphub auth login NAME` before it can be used. */
export class NeedsLoginError extends Error {
  override name = "NeedsLoginError";
  constructor(readonly command: string, detail: string) {
    super(`${detail}; run \`${command}\``);
  }
}

/** The redirect URL used when none was ever stored (the gateway never redirects anyway). */
const PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback";

/** What an interactive login adds to the provider. */
export interface InteractiveOptions {
  /** The loopback URL the authorization server redirects to. */
  redirectUrl: string;
  /** Shows (prints, opens) the authorization URL. */
  open(url: URL): void | Promise<void>;
}

/**
 * An OAuthClientProvider whose state lives in the store. Without `interactive`
 * (the gateway, `mcphub list`) it uses what a login stored, refreshes it, and
 * throws {@linkcode NeedsLoginError} where a user would be needed; it never
 * registers a client.
 */
export class StoreOAuthProvider implements OAuthClientProvider {
  readonly target: AuthTarget;
  #store: AuthStore;
  #interactive?: InteractiveOptions;
  #state?: string;
  #verifier?: string;
  /** What this login discovered (interactive only: a login does not read the stored discovery). */
  #discovered?: OAuthDiscoveryState;
  /** The tokens last handed to the SDK, so a refused refresh drops only those. */
  #seen?: { refresh?: string; access?: string };
  /** The authorization server discovery found, for messages. */
  authorizationServer?: string;

  constructor(store: AuthStore, target: AuthTarget, interactive?: InteractiveOptions) {
    this.#store = store;
    this.target = target;
    this.#interactive = interactive;
  }

  get #grant(): OAuthConfig["grant"] {
    return this.target.oauth?.grant ?? "authorization_code";
  }

  /** The stored row for this server and URL. */
  record(): AuthRecord | undefined {
    return this.#store.get(this.target.name, this.target.url);
  }

  #update(fields: Parameters<AuthStore["update"]>[2]): void {
    this.#store.update(this.target.name, this.target.url, fields);
  }

  #needsLogin(detail?: string): NeedsLoginError {
    const record = this.record();
    const note = record?.note;
    if (!detail && record?.wantedScope) {
      detail = `the server needs scope "${record.wantedScope}" beyond the login's ("${record.scope ?? ""}")`;
    }
    const at = this.authorizationServer ? ` (authorization server ${this.authorizationServer})` : "";
    return new NeedsLoginError(
      loginCommand(this.target),
      `${detail ?? "the server requires an OAuth login"}${at}${note ? `; ${note}` : ""}`,
    );
  }

  get redirectUrl(): string | undefined {
    if (this.#grant === "client_credentials") return undefined;
    return this.#interactive?.redirectUrl ?? this.record()?.redirectUrl ?? PLACEHOLDER_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.target.oauth?.scopes.join(" ");
    if (this.#grant === "client_credentials") {
      return {
        client_name: "mcphub",
        redirect_uris: [],
        grant_types: ["client_credentials"],
        ...(scope ? { scope } : {}),
      };
    }
    return {
      client_name: "mcphub",
      redirect_uris: [this.redirectUrl!],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    this.#state = crypto.randomUUID();
    return this.#state;
  }

  /** The `state` sent with the last authorization request. */
  get expectedState(): string | undefined {
    return this.#state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const configured = this.target.oauth;
    if (configured?.clientId) {
      return {
        client_id: configured.clientId,
        ...(configured.clientSecret ? { client_secret: configured.clientSecret } : {}),
      };
    }
    const stored = this.record()?.client as OAuthClientInformationMixed | undefined;
    if (stored) return stored;
    // Registering a client is part of a login, never a side effect of serving.
    if (!this.#interactive) throw this.#needsLogin();
    return undefined;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    if (this.target.oauth?.clientId) return; // configured in mcphub.yaml, never stored
    // The redirect URL goes with the registration: the next login listens there again and reuses it.
    this.#update({
      client: info as Record<string, unknown>,
      ...(this.#interactive ? { redirectUrl: this.#interactive.redirectUrl } : {}),
    });
  }

  tokens(): OAuthTokens | undefined {
    // A login starts afresh: the stored tokens are what it replaces.
    if (this.#interactive) return undefined;
    const tokens = this.record()?.tokens as OAuthTokens | undefined;
    this.#seen = tokens ? { refresh: tokens.refresh_token, access: tokens.access_token } : undefined;
    return tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    const now = Date.now();
    const seconds = typeof tokens.expires_in === "number" ? tokens.expires_in : undefined;
    const requested = this.target.oauth?.scopes.join(" ");
    this.#update({
      tokens: tokens as Record<string, unknown>,
      tokensAt: now,
      expiresAt: seconds !== undefined ? now + seconds * 1000 : null,
      scope: tokens.scope ?? this.record()?.scope ?? (requested || null),
      note: null,
      ...(this.#interactive ? { redirectUrl: this.#interactive.redirectUrl, wantedScope: null } : {}),
    });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.#interactive) {
      // The SDK asks for a new authorization when the server wants more scope (403 insufficient_scope).
      this.noteWantedScope(url.searchParams.get("scope") ?? undefined);
      throw this.#needsLogin();
    }
    await this.#interactive.open(url);
  }

  /** Records scopes the server asked for that the stored login lacks; the next login requests them. */
  noteWantedScope(scope: string | undefined): void {
    if (!scope) return;
    const record = this.record();
    if (!record?.scope) return;
    const granted = new Set(record.scope.split(" "));
    if (scope.split(" ").every((s) => !s || granted.has(s))) return;
    this.#update({ wantedScope: scope });
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error("no PKCE code verifier: the login was not started");
    return this.#verifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.#grant !== "client_credentials") return undefined;
    const params = new URLSearchParams({ grant_type: "client_credentials" });
    if (scope) params.set("scope", scope);
    return params;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    // A login discovers afresh, in case the authorization server moved; its callback leg (the code
    // exchange) reads what this login discovered (the SDK binds the code to that authorization server).
    if (this.#interactive) return this.#discovered;
    const state = this.record()?.discovery as OAuthDiscoveryState | undefined;
    if (state?.authorizationServerUrl) this.authorizationServer = state.authorizationServerUrl;
    return state;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.authorizationServer = state.authorizationServerUrl;
    if (this.#interactive) this.#discovered = state;
    this.#update({ discovery: state as unknown as Record<string, unknown> });
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    const ownClient = !this.target.oauth?.clientId;
    if ((scope === "all" || scope === "client") && ownClient) this.#update({ client: null });
    if (scope === "all" || scope === "tokens") {
      const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      this.#store.dropTokens(
        this.target.name,
        this.target.url,
        this.#seen ?? {},
        `the authorization server refused the stored ${
          scope === "all" ? "client" : "refresh token"
        } at ${when}`,
      );
    }
    if (scope === "all" || scope === "discovery") {
      this.#discovered = undefined;
      this.#update({ discovery: null });
    }
    if (scope === "verifier") this.#verifier = undefined;
  }
}

/** True when `error` (or its cause) means the server wants a login: 401, or a login is needed. */
export function isAuthError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof NeedsLoginError) return true;
    // Before the SDK's OAuth client is loaded, nothing can have thrown its UnauthorizedError.
    if (authSdk !== undefined && e instanceof authSdk.UnauthorizedError) return true;
    if (httpStatusOf(e) === 401) return true;
  }
  return false;
}

/** Per-server OAuth for a downstream connection: the provider, a fetch that refreshes early, pickup of a login. */
export class ServerAuth {
  readonly provider: StoreOAuthProvider;
  #refreshing?: Promise<void>;
  #fetch: typeof fetch;
  #sdk: Promise<typeof import("../mcp/sdk_auth.ts")>;

  constructor(store: AuthStore, target: AuthTarget, options: { fetch?: typeof fetch } = {}) {
    this.provider = new StoreOAuthProvider(store, target);
    this.#fetch = options.fetch ?? fetch;
    this.#sdk = loadAuthSdk();
    // A failed load surfaces at the first request, through ready() or fetch.
    this.#sdk.catch(() => {});
  }

  /** Settles once the SDK's OAuth client is loaded: await it before connecting (so 401s are recognised). */
  async ready(): Promise<void> {
    await this.#sdk;
  }

  /**
   * A fetch for the transport: a request carrying a bearer token whose token is
   * in its last quarter of life (at most the last minute) is sent with a token
   * refreshed first. A refresh that fails leaves the request as it was: the
   * server's 401 then goes the SDK's way (refresh again, or a login is needed).
   */
  readonly fetch: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (!headers.get("authorization")?.startsWith("Bearer ")) return this.#fetch(input, init);
    const { extractWWWAuthenticateParams } = await this.#sdk;
    const token = await this.#fresh();
    if (token) headers.set("Authorization", `Bearer ${token}`);
    const response = await this.#fetch(input, { ...init, headers });
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      if (error === "insufficient_scope") this.provider.noteWantedScope(scope);
    }
    return response;
  };

  /** True when `error` means the server wants a (new) login: 401, or 403 for scope the login lacks. */
  isAuthError(error: unknown): boolean {
    if (isAuthError(error)) return true;
    for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
      if (httpStatusOf(e) === 403) return this.provider.record()?.wantedScope !== undefined;
    }
    return false;
  }

  async #fresh(): Promise<string | undefined> {
    const record = this.provider.record();
    const tokens = record?.tokens as OAuthTokens | undefined;
    if (!record || !tokens) return undefined;
    if (record.expiresAt !== undefined && record.tokensAt !== undefined) {
      const lifetime = record.expiresAt - record.tokensAt;
      const margin = Math.min(60_000, lifetime / 4);
      const renewable = tokens.refresh_token !== undefined ||
        this.provider.target.oauth?.grant === "client_credentials";
      if (renewable && Date.now() >= record.expiresAt - margin) {
        const { auth } = await this.#sdk;
        this.#refreshing ??= auth(this.provider, {
          serverUrl: this.provider.target.url,
          fetchFn: this.#fetch,
        }).then(() => {}, () => {}).finally(() => this.#refreshing = undefined);
        await this.#refreshing;
        return (this.provider.record()?.tokens as OAuthTokens | undefined)?.access_token;
      }
    }
    return tokens.access_token;
  }

  /** A mark to compare a later login against ({@linkcode ServerAuth.loggedInSince}). */
  mark(): number {
    return this.provider.record()?.tokensAt ?? 0;
  }

  /** True when tokens were stored after `mark` (a login by `mcphub auth login`, or another gateway). */
  loggedInSince(mark: number): boolean {
    const record = this.provider.record();
    return record?.tokens !== undefined && (record.tokensAt ?? 0) > mark;
  }

  /** The command that logs this server in. */
  get loginCommand(): string {
    return loginCommand(this.provider.target);
  }

  /** Words for the `needs_auth` state: why, where, and the command to run. */
  reason(error: unknown): string {
    for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
      if (e instanceof NeedsLoginError) return e.message;
    }
    const record = this.provider.record();
    if (record?.wantedScope) {
      return `the server needs scope "${record.wantedScope}" beyond the login's ("${
        record.scope ?? ""
      }"); run \`${loginCommand(this.provider.target)}\``;
    }
    const note = record?.note;
    const at = this.provider.authorizationServer
      ? ` (authorization server ${this.provider.authorizationServer})`
      : "";
    return `the server refused the stored token${at}${note ? `; ${note}` : ""}; run \`${
      loginCommand(this.provider.target)
    }\``;
  }

  /** Replaces stored tokens and client secrets in text. */
  redact(text: string): string {
    const record = this.provider.record();
    const secrets = [
      record?.tokens?.access_token,
      record?.tokens?.refresh_token,
      record?.tokens?.id_token,
      record?.client?.client_secret,
      record?.client?.registration_access_token,
    ].filter((s): s is string => typeof s === "string" && s.length >= 4);
    let out = text;
    for (const secret of secrets) out = out.split(secret).join("***");
    return out;
  }
}

/** The OAuth handle of a remote server, or undefined where OAuth does not apply (stdio, a static Authorization header). */
export function serverAuth(
  store: AuthStore | undefined,
  server: Omit<AuthTarget, "url" | "loginCommand"> & { url?: string },
  options: { loginCommand?: (server: string) => string } = {},
): ServerAuth | undefined {
  if (!store || !server.url) return undefined;
  const staticAuth = Object.keys(server.headers ?? {}).some((h) => h.toLowerCase() === "authorization");
  if (staticAuth && !server.oauth) return undefined;
  const { name, url, oauth, headers } = server;
  return new ServerAuth(store, { name, url, oauth, headers, loginCommand: options.loginCommand?.(name) });
}
