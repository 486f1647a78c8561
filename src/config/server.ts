/**
 * One entry of `servers:`: structure first, then (only for servers in scope) `${VAR}` expansion,
 * `~` expansion and the URL check.
 *
 * @module
 */
import { join } from "node:path";
import type { OAuthConfig, ServerConfig } from "./types.ts";
import { type Environment, expandVariables } from "./interpolate.ts";
import { describe, type Field, type Reader } from "./reader.ts";
import { nameProblem, readHints, readInheritEnv } from "./rules.ts";

const SERVER_KEYS = [
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "transport",
  "headers",
  "oauth",
  "enabled",
  "namespace",
  "description",
  "tags",
  "use_when",
  "tool_use_when",
  "inherit_env",
  "trust",
] as const;
const STDIO_ONLY = ["args", "env", "cwd", "inherit_env"];
const REMOTE_ONLY = ["transport", "headers", "oauth"];
const OAUTH_KEYS = ["client_id", "client_secret", "scopes", "grant", "redirect_port"] as const;

/** `${NAME}` references (a `$$` is a literal `$`, so `$${NAME}` is not one). */
const VAR_REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A string that may hold `${VAR}` references, with where to put the expanded value. */
interface Expandable {
  field: Field;
  raw: string;
  apply(value: string): void;
}

/** A validated server whose strings are still as written. */
export interface PendingServer {
  config: ServerConfig;
  /** Call once: expands `${VAR}`s (when `env` is given), then `~` in cwd, then checks the URL. */
  finish(reader: Reader, env: Environment | undefined, home: string | undefined): void;
}

/** Reads one server; problems go to the reader. */
export function readServer(reader: Reader, field: Field, name: string): PendingServer {
  const problem = nameProblem(name, "server");
  if (problem) reader.failKey(field, problem);
  const config: ServerConfig = {
    name,
    args: [],
    env: {},
    transport: "http",
    headers: {},
    enabled: true,
    tags: [],
    useWhen: [],
    toolUseWhen: {},
  };
  const expandable: Expandable[] = [];
  const later = (entry: Field, raw: string, apply: (value: string) => void) => {
    apply(raw);
    expandable.push({ field: entry, raw, apply });
  };
  const entries =
    reader.entries(field, "a mapping of server settings", { known: SERVER_KEYS, allowNull: true }) ??
      [];
  const keys = new Map(entries.map((entry) => [entry.path.slice(field.path.length + 1), entry]));
  const hasCommand = keys.has("command");
  const hasUrl = keys.has("url");
  if (hasCommand === hasUrl) reader.failKey(field, 'set exactly one of "command" or "url"');
  let urlField: Field | undefined;
  let cwdField: Field | undefined;

  for (const [key, entry] of keys) {
    if (hasUrl && !hasCommand && STDIO_ONLY.includes(key)) {
      reader.failKey(entry, `"${key}" is only for stdio servers (with "command"); this server sets "url"`);
      continue;
    }
    if (hasCommand && !hasUrl && REMOTE_ONLY.includes(key)) {
      reader.failKey(entry, `"${key}" is only for remote servers (with "url"); this server sets "command"`);
      continue;
    }
    switch (key) {
      case "command": {
        const value = reader.string(entry, { nonEmpty: true });
        if (value !== undefined) later(entry, value, (v) => config.command = v);
        break;
      }
      case "args":
        for (const item of reader.items(entry, "a list of strings") ?? []) {
          const value = reader.text(item);
          const position = config.args.length;
          if (value !== undefined) later(item, value, (v) => config.args[position] = v);
        }
        break;
      case "env":
      case "headers": {
        const target = key === "env" ? config.env : config.headers;
        const what = key === "env"
          ? "a mapping of variable names to values"
          : "a mapping of header names to values";
        for (const item of reader.entries(entry, what, { allowNull: true }) ?? []) {
          const itemName = item.path.slice(entry.path.length + 1);
          if (key === "env" && itemName.includes("=")) {
            reader.failKey(item, 'environment variable names cannot contain "="');
            continue;
          }
          const value = reader.text(item);
          if (value !== undefined) later(item, value, (v) => target[itemName] = v);
        }
        break;
      }
      case "cwd": {
        const value = reader.string(entry, { nonEmpty: true });
        if (value !== undefined) {
          cwdField = entry;
          later(entry, value, (v) => config.cwd = v);
        }
        break;
      }
      case "url": {
        const value = reader.string(entry, { nonEmpty: true });
        if (value !== undefined) {
          urlField = entry;
          later(entry, value, (v) => config.url = v);
        }
        break;
      }
      case "transport": {
        const value = reader.oneOf(entry, ["http", "sse"] as const);
        if (value) config.transport = value;
        break;
      }
      case "oauth":
        config.oauth = readOAuth(reader, entry, later);
        break;
      case "inherit_env":
        config.inheritEnv = readInheritEnv(reader, entry);
        break;
      case "trust": {
        const value = reader.oneOf(entry, ["changes", "pin", "off"] as const);
        if (value) config.trust = value;
        break;
      }
      case "enabled": {
        const value = reader.boolean(entry);
        if (value !== undefined) config.enabled = value;
        break;
      }
      case "namespace": {
        const value = reader.boolean(entry);
        if (value === false) config.namespace = false;
        break;
      }
      case "description": {
        const value = reader.string(entry);
        if (value !== undefined) config.description = value;
        break;
      }
      case "tags":
        config.tags = reader.stringList(entry, "a list of tags", { nonEmpty: true }) ?? [];
        break;
      case "use_when":
        config.useWhen = readHints(reader, entry) ?? [];
        break;
      case "tool_use_when":
        for (
          const item of reader.entries(entry, "a mapping of tool names to hints", { allowNull: true }) ?? []
        ) {
          const hints = readHints(reader, item);
          if (hints) config.toolUseWhen[item.path.slice(entry.path.length + 1)] = hints;
        }
        break;
    }
  }

  const oauthField = keys.get("oauth");
  if (oauthField && Object.keys(config.headers).some((h) => h.toLowerCase() === "authorization")) {
    reader.failKey(oauthField, 'set either "oauth" or an Authorization header in "headers", not both');
  }

  return {
    config,
    finish(target, env, home) {
      // Strings still holding `${VAR}` (not expanded, or expansion failed) cannot be checked further.
      const unresolved = new Set<Field>();
      const vars = new Set<string>();
      for (const item of expandable) {
        for (const match of item.raw.matchAll(VAR_REFERENCE)) if (match[1]) vars.add(match[1]);
      }
      if (vars.size) config.envVars = [...vars];
      const secretVars = expandable
        .filter((item) => item.field.path.endsWith(".oauth.client_secret"))
        .flatMap((item) => [...item.raw.matchAll(VAR_REFERENCE)].map((match) => match[1]).filter(Boolean));
      if (secretVars.length) config.privateVars = secretVars;
      for (const item of expandable) {
        if (!env) {
          if (item.raw.includes("$")) unresolved.add(item.field);
          continue;
        }
        const result = expandVariables(item.raw, env);
        if (result.ok) {
          item.apply(result.value);
          if (result.used.length) (config.secrets ??= []).push(...result.used);
          continue;
        }
        unresolved.add(item.field);
        target.fail(
          item.field,
          "unset" in result
            ? `environment variable ${result.unset} is not set`
            : 'malformed variable reference; write ${NAME} (letters, digits and "_") or "$$" for a literal "$"',
        );
      }
      // A client secret written literally is as secret as one from ${VAR}.
      if (config.oauth?.clientSecret) (config.secrets ??= []).push(config.oauth.clientSecret);
      // URL userinfo is a secret, in every form it can take: as written, decoded, and the
      // `Authorization: Basic` header fetch makes of it.
      if (config.url !== undefined) {
        const userinfo = userinfoSecrets(config.url);
        if (userinfo.length) (config.secrets ??= []).push(...userinfo);
      }
      if (cwdField && config.cwd !== undefined && (config.cwd === "~" || config.cwd.startsWith("~/"))) {
        if (home === undefined) target.fail(cwdField, 'cannot expand "~": HOME is not set');
        else config.cwd = join(home, config.cwd.slice(1));
      }
      if (urlField && config.url !== undefined && !unresolved.has(urlField) && !isHttpUrl(config.url)) {
        target.fail(urlField, "expected an http:// or https:// URL");
      }
    },
  };
}

/** `oauth:` of a remote server: how mcphub logs in (see `mcphub auth login`). */
function readOAuth(
  reader: Reader,
  field: Field,
  later: (entry: Field, raw: string, apply: (value: string) => void) => void,
): OAuthConfig | undefined {
  const oauth: OAuthConfig = { scopes: [], grant: "authorization_code" };
  const entries = reader.entries(field, "a mapping of OAuth settings", {
    known: OAUTH_KEYS,
    allowNull: true,
  });
  if (!entries) return undefined;
  for (const entry of entries) {
    switch (entry.path.slice(field.path.length + 1)) {
      case "client_id": {
        const value = reader.string(entry, { nonEmpty: true });
        if (value !== undefined) later(entry, value, (v) => oauth.clientId = v);
        break;
      }
      case "client_secret": {
        const value = reader.string(entry, { nonEmpty: true });
        if (value !== undefined) later(entry, value, (v) => oauth.clientSecret = v);
        break;
      }
      case "scopes":
        oauth.scopes = reader.stringList(entry, "a list of scopes", { nonEmpty: true }) ?? [];
        for (const scope of oauth.scopes) {
          if (/\s/.test(scope)) {
            reader.fail(entry, `scope "${scope}" contains a space; list each scope separately`);
          }
        }
        break;
      case "grant": {
        const value = reader.oneOf(entry, ["authorization_code", "client_credentials"] as const);
        if (value) oauth.grant = value;
        break;
      }
      case "redirect_port": {
        const node = entry.node as { value?: unknown } | null;
        const value = node?.value;
        if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535) {
          oauth.redirectPort = value;
        } else {
          reader.fail(entry, `expected a port number from 1 to 65535, got ${describe(entry.node)}`);
        }
        break;
      }
    }
  }
  const has = (key: string) => entries.some((e) => e.path === `${field.path}.${key}`);
  if (has("client_secret") && !has("client_id")) {
    reader.failKey(field, '"client_secret" needs "client_id" (the client it belongs to)');
  }
  if (oauth.grant === "client_credentials" && !(has("client_id") && has("client_secret"))) {
    reader.failKey(field, 'grant: client_credentials needs "client_id" and "client_secret"');
  }
  return oauth;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** The forms of a URL's userinfo that must never be shown: raw, decoded, `user:pass` and its base64. */
export function userinfoSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  if (!parsed.username && !parsed.password) return [];
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  const user = decode(parsed.username);
  const pass = decode(parsed.password);
  const pair = `${user}:${pass}`;
  const base64 = btoa(String.fromCharCode(...new TextEncoder().encode(pair)));
  const out = [base64, pair, `${parsed.username}:${parsed.password}`];
  // A password is the secret; with none, the user name is (a token written as `https://TOKEN@host`).
  if (parsed.password) out.push(parsed.password, pass);
  else out.push(parsed.username, user);
  return [...new Set(out)].filter((s) => s.length >= 4);
}
