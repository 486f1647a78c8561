/**
 * `mcphub auth login`: the authorization-code flow with PKCE through a loopback
 * redirect listener on 127.0.0.1, or the client-credentials grant. The SDK does
 * discovery, registration, PKCE and the token exchange; this module runs the
 * listener and shows the authorization URL.
 *
 * @module
 */
import type { AuthRecord, AuthStore } from "./store.ts";
import { type AuthTarget, loadAuthSdk, StoreOAuthProvider } from "./provider.ts";
import { guardBodies } from "../json/mod.ts";

/** How the authorization URL reaches the user. */
export type LoginMode =
  /** print it and open a browser when one is available */
  | "browser"
  /** print it only */
  | "print"
  /** fetch it without a browser and follow its redirects: for servers that approve without a user (tests, CI) */
  | "headless";

/** Options of {@linkcode login}. */
export interface LoginOptions {
  store: AuthStore;
  server: AuthTarget;
  mode: LoginMode;
  /** Lines for the user (stderr). */
  log(line: string): void;
  /** How long to wait for the redirect. @default 300000 */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Opens a URL in a browser; resolves to false when none could be started. */
  openBrowser?: (url: string) => Promise<boolean>;
}

/** A login that did not complete; the message says why and what to do. */
export class LoginError extends Error {
  override name = "LoginError";
}

/** Runs the login and returns what was stored (never print its tokens). */
export async function login(options: LoginOptions): Promise<AuthRecord> {
  const { server, store } = options;
  const { auth } = await loadAuthSdk();
  const probe = await probeServer(server);
  const previous = store.get(server.name, server.url);
  // Step-up: the scopes granted so far plus those the server asked for since.
  const wanted = previous?.wantedScope
    ? [...new Set([...(previous.scope ?? "").split(" "), ...previous.wantedScope.split(" ")])].filter(Boolean)
      .join(" ")
    : undefined;
  const scope = server.oauth?.scopes.join(" ") || wanted || probe.scope;
  if (server.oauth?.grant === "client_credentials") {
    const provider = new StoreOAuthProvider(store, server);
    const result = await auth(provider, {
      serverUrl: server.url,
      resourceMetadataUrl: probe.resourceMetadataUrl,
      scope,
    });
    if (result !== "AUTHORIZED") throw new LoginError("the authorization server did not issue a token");
    return store.get(server.name, server.url)!;
  }

  const listener = listen(server, store);
  const redirectUrl = `http://127.0.0.1:${listener.port}/callback`;
  if (previous?.redirectUrl !== redirectUrl && previous?.client && !server.oauth?.clientId) {
    // The registered client names another redirect URL: register again.
    store.update(server.name, server.url, { client: null });
  }
  const timeoutMs = options.timeoutMs ?? 300_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let headless: Promise<void> | undefined;
  const provider = new StoreOAuthProvider(store, server, {
    redirectUrl,
    open: async (url) => {
      listener.expect(provider.expectedState);
      if (options.mode === "headless") {
        options.log(`Authorizing without a browser at ${url.origin}${url.pathname}`);
        headless = followHeadless(url, signal);
        return;
      }
      options.log(`Open this URL to log in to "${server.name}":\n\n  ${url}\n`);
      if (options.mode === "browser" && await (options.openBrowser ?? openBrowser)(url.toString())) {
        options.log("(opened in your browser)");
      }
      options.log(`Waiting for the redirect to ${redirectUrl} (up to ${Math.round(timeoutMs / 1000)}s)…`);
    },
  });
  try {
    const started = await auth(provider, {
      serverUrl: server.url,
      resourceMetadataUrl: probe.resourceMetadataUrl,
      scope,
    });
    if (started === "REDIRECT") {
      const waits = [listener.code, abortPromise(signal, timeout, timeoutMs)];
      if (headless) waits.push(headless.then(() => listener.code));
      const code = await Promise.race(waits);
      const result = await auth(provider, {
        serverUrl: server.url,
        authorizationCode: code,
        resourceMetadataUrl: probe.resourceMetadataUrl,
        scope,
      });
      if (result !== "AUTHORIZED") throw new LoginError("the authorization server did not issue a token");
    }
    return store.get(server.name, server.url)!;
  } finally {
    await listener.close();
  }
}

/** What a request without a token learns: the resource metadata URL and scope from WWW-Authenticate. */
async function probeServer(server: AuthTarget): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const headers = new Headers(server.headers);
  headers.set("content-type", "application/json");
  headers.set("accept", "application/json, text/event-stream");
  try {
    const response = await fetch(server.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "mcphub", version: "auth-probe" },
        },
      }),
      signal: AbortSignal.timeout(30_000),
    });
    await response.body?.cancel();
    if (response.status !== 401) return {};
    const { extractWWWAuthenticateParams } = await loadAuthSdk();
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return { resourceMetadataUrl, scope };
  } catch {
    // Discovery still tries the well-known locations.
    return {};
  }
}

function abortPromise(signal: AbortSignal, timeout: AbortSignal, timeoutMs: number): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () =>
      reject(
        new LoginError(
          timeout.aborted
            ? `no redirect came back within ${Math.round(timeoutMs / 1000)}s; run the command again`
            : "the login was cancelled",
        ),
      );
    if (signal.aborted) fail();
    signal.addEventListener("abort", fail, { once: true });
  });
}

/** Fetches the authorization URL and follows redirects, as a browser would when approval needs no user. */
async function followHeadless(url: URL, signal: AbortSignal): Promise<void> {
  const response = await fetch(url, { redirect: "follow", signal });
  await response.body?.cancel();
  if (!response.ok) {
    throw new LoginError(
      `the authorization server answered HTTP ${response.status} at ${url.origin}${url.pathname}; ` +
        "--headless works only where approval needs no user: run without it",
    );
  }
  const landed = new URL(response.url);
  if (landed.hostname !== "127.0.0.1") {
    throw new LoginError(
      `the authorization server did not redirect back (it stopped at ${landed.origin}${landed.pathname}, ` +
        "probably a login page); --headless works only where approval needs no user: run without it",
    );
  }
}

interface CallbackListener {
  port: number;
  /** The authorization code, once the redirect arrives. */
  code: Promise<string>;
  /** The `state` the redirect must carry. */
  expect(state: string | undefined): void;
  close(): Promise<void>;
}

/** The loopback redirect listener: the configured port, else the last login's port when free, else a random one. */
function listen(server: AuthTarget, store: AuthStore): CallbackListener {
  const result = Promise.withResolvers<string>();
  result.promise.catch(() => {});
  let expected: string | undefined;
  let settled = false;
  const handler = (request: Request): Response => {
    const url = new URL(request.url);
    if (url.pathname !== "/callback") return new Response("Not found\n", { status: 404 });
    if (settled) return page("This login has already finished; you can close this tab.", 409);
    const error = url.searchParams.get("error");
    if (error) {
      settled = true;
      const description = url.searchParams.get("error_description");
      result.reject(
        new LoginError(`the authorization server refused: ${error}${description ? ` (${description})` : ""}`),
      );
      return page("The login was refused; see the terminal.", 400);
    }
    const code = url.searchParams.get("code");
    if (!code) return page("The redirect carried no authorization code.", 400);
    if (expected !== undefined && url.searchParams.get("state") !== expected) {
      return page("The redirect's state does not match this login; ignored.", 400);
    }
    settled = true;
    result.resolve(code);
    return page("mcphub is logged in. You can close this tab.", 200);
  };
  const fixed = server.oauth?.redirectPort;
  const previous = store.get(server.name, server.url)?.redirectUrl;
  const previousPort = previous ? Number(new URL(previous).port) || undefined : undefined;
  let http: Deno.HttpServer<Deno.NetAddr> | undefined;
  for (const port of fixed ? [fixed] : [previousPort, 0]) {
    if (port === undefined) continue;
    try {
      guardBodies(); // Deno.serve's requests are made without the global Request
      http = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, handler);
      break;
    } catch (error) {
      if (fixed) {
        throw new LoginError(
          `cannot listen on 127.0.0.1:${fixed} (oauth.redirect_port): ${(error as Error).message}`,
        );
      }
    }
  }
  return {
    port: http!.addr.port,
    code: result.promise,
    expect: (state) => expected = state,
    close: async () => {
      await http!.shutdown();
    },
  };
}

function page(text: string, status: number): Response {
  return new Response(
    `<!doctype html><meta charset="utf-8"><title>mcphub</title><p>${text}</p>\n`,
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

/** Opens `url` in the desktop's browser when there is one; false when none could be started. */
export async function openBrowser(url: string): Promise<boolean> {
  const os = Deno.build.os;
  let command: string[];
  if (os === "darwin") command = ["open", url];
  else if (os === "windows") command = ["rundll32", "url.dll,FileProtocolHandler", url];
  else {
    if (!Deno.env.get("DISPLAY") && !Deno.env.get("WAYLAND_DISPLAY")) return false;
    command = ["xdg-open", url];
  }
  try {
    const child = new Deno.Command(command[0]!, {
      args: command.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const status = await child.status;
    return status.success;
  } catch {
    return false;
  }
}
