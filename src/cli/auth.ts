/**
 * `mcphub auth login | status | logout`: OAuth logins of remote servers, kept
 * in the store. Never prints a token or a client secret.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { loadContextConfig, storePath } from "./host.ts";
import { formatTable } from "./table.ts";
import { loginCommandFor } from "./serve.ts";
import type { Config, ServerConfig } from "../config/mod.ts";
import { openStore } from "../store/mod.ts";
import { authMigrations, type AuthRecord, AuthStore, login, type LoginMode } from "../auth/mod.ts";

const LOGIN_HELP = `Usage: mcphub auth login SERVER [--no-browser] [--headless] [--timeout 300]

Logs mcphub into a remote server protected by OAuth and keeps the tokens in the
store (--db), where the gateway finds them: a running \`mcphub mcp serve\` picks
the login up within a second, without a restart.

Authorization code with PKCE: mcphub listens on 127.0.0.1 (a random port, or
oauth.redirect_port), prints the authorization URL and opens a browser when one
is available; the authorization server redirects back to it. The client is the
one in the server's oauth: entry (client_id, client_secret), else one registered
dynamically. With oauth.grant: client_credentials there is no browser at all.

Options:
  --no-browser    Print the URL only
  --headless      Fetch the URL and follow its redirects without a browser: for
                  authorization servers that approve without a user (tests, CI)
  --timeout SECS  How long to wait for the redirect (default 300)
`;

const STATUS_HELP = `Usage: mcphub auth status [SERVER] [--json]

Per remote server: logged in or not, when the access token expires, the granted
scopes and the authorization server. Never shows a token. A server whose token
has expired but holds a refresh token is refreshed on its next use.
`;

const LOGOUT_HELP = `Usage: mcphub auth logout SERVER

Deletes the server's tokens and dynamically registered client from the store.
The gateway then reports the server as needs_auth on its next 401.
`;

/** Runs `use` with the auth store, closing it after. */
async function withAuthStore<T>(ctx: CommandContext, use: (store: AuthStore) => T | Promise<T>): Promise<T> {
  const db = openStore(storePath(ctx), { migrations: authMigrations });
  try {
    return await use(new AuthStore(db));
  } finally {
    db.close();
  }
}

function remoteServer(config: Config, name: string): ServerConfig & { url: string } {
  const server = config.servers.find((s) => s.name === name);
  if (!server) {
    const remote = config.servers.filter((s) => s.url).map((s) => s.name);
    throw new Error(
      `no server "${name}" in ${config.path ?? "the config"}; ${
        remote.length ? `remote servers: ${remote.join(", ")}` : "it has no remote (url:) servers"
      }`,
    );
  }
  if (!server.url) {
    throw new Error(
      `server "${name}" is a stdio server (command:); OAuth logins are for remote servers (url:)`,
    );
  }
  if (Object.keys(server.headers).some((h) => h.toLowerCase() === "authorization")) {
    throw new Error(
      `server "${name}" sends a static Authorization header (servers.${name}.headers); remove it to use OAuth`,
    );
  }
  return server as ServerConfig & { url: string };
}

/** `auth login`. */
export const authLoginCommand: Command = {
  name: "auth login",
  summary: "Log into a remote server with OAuth (tokens kept in the store)",
  help: LOGIN_HELP,
  async run(ctx) {
    const { values, positionals } = parseCommandArgs("auth login", () =>
      parseArgs({
        args: ctx.args,
        options: {
          "no-browser": { type: "boolean" },
          headless: { type: "boolean" },
          timeout: { type: "string" },
        },
        strict: true,
        allowPositionals: true,
      }));
    if (positionals.length !== 1) {
      throw new UsageError("name one server: mcphub auth login SERVER", "auth login");
    }
    const timeout = values.timeout === undefined ? 300 : Number(values.timeout);
    if (!Number.isFinite(timeout) || timeout <= 0) {
      throw new UsageError(
        `--timeout takes seconds (a positive number), got "${values.timeout}"`,
        "auth login",
      );
    }
    const config = await loadContextConfig(ctx);
    const server = remoteServer(config, positionals[0]!);
    const mode: LoginMode = values.headless ? "headless" : values["no-browser"] ? "print" : "browser";
    const record = await withAuthStore(ctx, (store) =>
      login({
        store,
        server,
        mode,
        log: (line) => ctx.err(`${line}\n`),
        timeoutMs: timeout * 1000,
        signal: ctx.signal,
      }));
    ctx.out(`Logged in to "${server.name}": ${describeLogin(record, Date.now())}.\n`);
    ctx.out("A running gateway picks this up within a second; no restart needed.\n");
    return 0;
  },
};

/** One line about a stored login; never a secret. */
function describeLogin(record: AuthRecord, now: number): string {
  const parts = [record.expiresAt === undefined ? "no expiry given" : expiry(record.expiresAt, now)];
  parts.push(record.scope ? `scopes ${record.scope}` : "no scopes");
  if (record.tokens?.refresh_token !== undefined) parts.push("refreshable");
  return parts.join(", ");
}

function expiry(at: number, now: number): string {
  const seconds = Math.round((at - now) / 1000);
  const iso = new Date(at).toISOString().replace(/\.\d+Z$/, "Z");
  if (seconds <= 0) return `access token expired at ${iso}`;
  const span = seconds >= 3600
    ? `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`
    : seconds >= 60
    ? `${Math.floor(seconds / 60)}m`
    : `${seconds}s`;
  return `access token expires in ${span} (${iso})`;
}

/** What `auth status` shows for one server. */
interface StatusRow {
  server: string;
  url: string;
  status: "logged_in" | "expired" | "not_logged_in";
  expires_at?: string;
  refreshable?: boolean;
  scopes?: string[];
  grant: "authorization_code" | "client_credentials";
  client: "configured" | "registered" | "none";
  authorization_server?: string;
  note?: string;
}

function statusRow(
  server: ServerConfig & { url: string },
  record: AuthRecord | undefined,
  now: number,
): StatusRow {
  const row: StatusRow = {
    server: server.name,
    url: server.url,
    status: "not_logged_in",
    grant: server.oauth?.grant ?? "authorization_code",
    client: server.oauth?.clientId ? "configured" : record?.client ? "registered" : "none",
  };
  if (record?.tokens) {
    row.status = record.expiresAt !== undefined && record.expiresAt <= now ? "expired" : "logged_in";
    if (record.expiresAt !== undefined) row.expires_at = new Date(record.expiresAt).toISOString();
    row.refreshable = record.tokens.refresh_token !== undefined;
  }
  if (record?.scope) row.scopes = record.scope.split(" ").filter(Boolean);
  const as = record?.discovery?.authorizationServerUrl;
  if (typeof as === "string") row.authorization_server = as;
  if (record?.note) row.note = record.note;
  return row;
}

/** `auth status`. */
export const authStatusCommand: Command = {
  name: "auth status",
  summary: "Show which remote servers are logged in (expiry, scopes; never tokens)",
  help: STATUS_HELP,
  async run(ctx) {
    const { values, positionals } = parseCommandArgs("auth status", () =>
      parseArgs({
        args: ctx.args,
        options: { json: { type: "boolean" } },
        strict: true,
        allowPositionals: true,
      }));
    if (positionals.length > 1) throw new UsageError("name at most one server", "auth status");
    const config = await loadContextConfig(ctx);
    const servers = positionals.length
      ? [remoteServer(config, positionals[0]!)]
      : config.servers.filter((s): s is ServerConfig & { url: string } =>
        s.url !== undefined && !Object.keys(s.headers).some((h) => h.toLowerCase() === "authorization")
      );
    const now = Date.now();
    const rows = await withAuthStore(
      ctx,
      (store) => servers.map((s) => statusRow(s, store.get(s.name, s.url), now)),
    );
    if (values.json || ctx.global.json) {
      ctx.out(JSON.stringify({ store: storePath(ctx), servers: rows }, null, 2) + "\n");
      return 0;
    }
    if (rows.length === 0) {
      ctx.out(
        "No remote servers use OAuth in this config (servers with a static Authorization header do not).\n",
      );
      return 0;
    }
    ctx.out(formatTable(
      ["SERVER", "STATUS", "EXPIRES", "SCOPES", "AUTHORIZATION SERVER"],
      rows.map((r) => [
        r.server,
        r.status === "not_logged_in"
          ? "not logged in"
          : r.status === "expired"
          ? `expired${r.refreshable ? " (refreshes on next use)" : ""}`
          : "logged in",
        r.expires_at?.replace(/\.\d+Z$/, "Z") ?? "",
        (r.scopes ?? []).join(" "),
        r.authorization_server ?? "",
      ]),
    ));
    for (const r of rows) if (r.note) ctx.out(`${r.server}: ${r.note}\n`);
    const missing = rows.filter((r) => r.status === "not_logged_in").map((r) => r.server);
    if (missing.length) ctx.out(`\nLog in with: ${loginCommandFor(ctx, config.path, missing[0]!)}\n`);
    return 0;
  },
};

/** `auth logout`. */
export const authLogoutCommand: Command = {
  name: "auth logout",
  summary: "Forget a remote server's OAuth tokens and registered client",
  help: LOGOUT_HELP,
  async run(ctx) {
    const { positionals } = parseCommandArgs(
      "auth logout",
      () => parseArgs({ args: ctx.args, options: {}, strict: true, allowPositionals: true }),
    );
    if (positionals.length !== 1) {
      throw new UsageError("name one server: mcphub auth logout SERVER", "auth logout");
    }
    const name = positionals[0]!;
    const config = await loadContextConfig(ctx);
    // A server removed from the config can still be logged out of.
    if (config.servers.some((s) => s.name === name)) remoteServer(config, name);
    const removed = await withAuthStore(ctx, (store) => store.delete(name));
    ctx.out(
      removed
        ? `Logged out of "${name}": its tokens and registered client are deleted from ${storePath(ctx)}.\n`
        : `"${name}" was not logged in; nothing to delete.\n`,
    );
    return 0;
  },
};
