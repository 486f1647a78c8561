/**
 * The HTTP listener's settings: `listen:` (`HOST:PORT`), `session_idle:`, `allowed_hosts:`, `listen_limits:`
 * and each agent's `token:` (`${VAR}` or `sha256:HEX`, never a literal secret in the file).
 *
 * @module
 */
import { isScalar } from "./yaml_nodes.ts";
import { describe, type Field, type Reader } from "./reader.ts";
import { type Environment, expandVariables } from "./interpolate.ts";
import type { AgentConfig, AgentQuota, ListenLimits } from "./types.ts";
import { readSize, readTimeout } from "./settings.ts";

/** A parsed `HOST:PORT`. */
export interface ListenAddress {
  /** The host to bind, without brackets (`127.0.0.1`, `::1`, `0.0.0.0`). */
  hostname: string;
  /** 0 = any free port. */
  port: number;
}

const LISTEN_PATTERN = /^(\[[^\]\s]+\]|[^:\s[\]]*):(\d{1,5})$/;

/**
 * Parses `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`, `:8080` = loopback, port 0 = any free port).
 *
 * @throws {RangeError} naming the accepted forms
 */
export function parseListen(text: string): ListenAddress {
  const match = LISTEN_PATTERN.exec(text.trim());
  if (!match || Number(match[2]) > 65535) {
    throw new RangeError(
      `"${text}" is not HOST:PORT; write e.g. "127.0.0.1:8080", "[::1]:8080" or ":8080" (loopback)`,
    );
  }
  const host = match[1].startsWith("[") ? match[1].slice(1, -1) : match[1];
  return { hostname: host || "127.0.0.1", port: Number(match[2]) };
}

/** True for an address only this machine can reach. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** `listen:`: a `HOST:PORT` string. */
export function readListen(reader: Reader, field: Field): string | undefined {
  const value = isScalar(field.node) ? field.node.value : undefined;
  if (typeof value !== "string") {
    return reader.fail(field, `expected "HOST:PORT" such as "127.0.0.1:8080", got ${describe(field.node)}`);
  }
  try {
    parseListen(value);
  } catch (error) {
    return reader.fail(field, (error as Error).message);
  }
  return value.trim();
}

/** `allowed_hosts:`: host names (no port) a request's Host and Origin may carry besides loopback names. */
export function readAllowedHosts(reader: Reader, field: Field): string[] | undefined {
  const items = reader.items(field, 'a list of host names such as "mcp.example.com"');
  if (!items) return undefined;
  const hosts: string[] = [];
  for (const item of items) {
    const host = reader.string(item, { nonEmpty: true });
    if (host === undefined) continue;
    if (!/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/.test(host)) {
      reader.fail(item, `expected a host name without scheme or port, e.g. "mcp.example.com", got "${host}"`);
      continue;
    }
    hosts.push(host.toLowerCase());
  }
  return hosts;
}

const HASHED = /^sha256:[0-9a-f]{64}$/;

/** `agents.NAME.token:`: `${VAR}` (the token is in the environment) or `sha256:HEX` (its hash). */
export function readToken(reader: Reader, field: Field): string | undefined {
  const value = reader.string(field, { nonEmpty: true });
  if (value === undefined) return undefined;
  if (HASHED.test(value)) return value;
  if (value.startsWith("sha256:")) {
    return reader.fail(
      field,
      'expected "sha256:" and 64 lowercase hex digits (printf %s "$TOKEN" | sha256sum)',
    );
  }
  if (!/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(value)) {
    return reader.fail(
      field,
      "a token written in the file is readable by anyone who can read the file; write it as ${VAR} " +
        '(set VAR in the environment) or as its hash "sha256:HEX" (printf %s "$TOKEN" | sha256sum)',
    );
  }
  return value;
}

/** What a token setting resolves to: the SHA-256 of the token, hex. */
export async function tokenHash(
  agent: AgentConfig,
  env: Environment,
  file: string | undefined,
): Promise<string | undefined> {
  if (agent.token === undefined) return undefined;
  return await secretHash(agent.token, `agents.${agent.name}.token`, env, file);
}

/**
 * What a token setting (`${VAR}` or `sha256:HEX`, read by {@linkcode readToken}) resolves to: the SHA-256
 * of the token, hex.
 *
 * @param key the setting's path in the file, for messages (`metrics_token`)
 * @throws {RangeError} naming the file, the key and the fix (an unset variable, a short token)
 */
export async function secretHash(
  value: string,
  key: string,
  env: Environment,
  file: string | undefined,
): Promise<string> {
  if (HASHED.test(value)) return value.slice("sha256:".length);
  const expanded = expandVariables(value, env);
  if (!expanded.ok) {
    const why = "unset" in expanded
      ? `environment variable ${expanded.unset} is not set`
      : "malformed ${VAR}";
    throw new RangeError(
      `${file ?? "mcphub.yaml"}: ${key}: ${why}; set it before starting mcphub, or write ` +
        'the token\'s hash as "sha256:HEX" (printf %s "$TOKEN" | sha256sum)',
    );
  }
  if (expanded.value.length < 16) {
    throw new RangeError(
      `${file ?? "mcphub.yaml"}: ${key}: the token is shorter than 16 characters; use a ` +
        "random one, e.g. openssl rand -hex 32",
    );
  }
  return await sha256Hex(expanded.value);
}

/** SHA-256 of UTF-8 text, lowercase hex. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `listen_limits:` when the file has none. */
export function defaultListenLimits(): ListenLimits {
  return {
    maxConnections: 1024,
    maxPending: 256,
    headerTimeoutMs: 30_000,
    idleTimeoutMs: 300_000,
    eventsPerSession: 1024 * 1024,
    eventsTotal: 32 * 1024 * 1024,
    relayInFlight: 8,
    relayRequests: 64,
    relayWindowMs: 60_000,
  };
}

const LIMIT_KEYS = [
  "max_connections",
  "max_pending",
  "header_timeout",
  "idle_timeout",
  "events_per_session",
  "events_total",
  "relay_in_flight",
  "relay_requests",
  "relay_window",
] as const;

/**
 * `listen_limits:`: `max_connections`, `max_pending` (counts), `header_timeout`, `idle_timeout` (durations);
 * `events_per_session`, `events_total` (sizes of the resumable events kept); `relay_in_flight`,
 * `relay_requests` (counts) and `relay_window` (a duration) bounding each server's requests to the host.
 */
export function readListenLimits(reader: Reader, field: Field): ListenLimits {
  const limits = defaultListenLimits();
  const entries =
    reader.entries(field, "a mapping of connection limits", { known: LIMIT_KEYS, allowNull: true }) ??
      [];
  for (const entry of entries) {
    const key = entry.path.slice(field.path.length + 1) as typeof LIMIT_KEYS[number];
    switch (key) {
      case "header_timeout":
        limits.headerTimeoutMs = readTimeout(reader, entry) ?? limits.headerTimeoutMs;
        break;
      case "idle_timeout":
        limits.idleTimeoutMs = readTimeout(reader, entry) ?? limits.idleTimeoutMs;
        break;
      case "relay_window":
        limits.relayWindowMs = readTimeout(reader, entry) ?? limits.relayWindowMs;
        break;
      case "events_per_session":
        limits.eventsPerSession = readSize(reader, entry) ?? limits.eventsPerSession;
        break;
      case "events_total":
        limits.eventsTotal = readSize(reader, entry) ?? limits.eventsTotal;
        break;
      case "max_connections":
        limits.maxConnections = readCount(reader, entry) ?? limits.maxConnections;
        break;
      case "max_pending":
        limits.maxPending = readCount(reader, entry) ?? limits.maxPending;
        break;
      case "relay_in_flight":
        limits.relayInFlight = readCount(reader, entry) ?? limits.relayInFlight;
        break;
      case "relay_requests":
        limits.relayRequests = readCount(reader, entry) ?? limits.relayRequests;
        break;
    }
  }
  if (limits.maxPending > limits.maxConnections) limits.maxPending = limits.maxConnections;
  return limits;
}

/** A whole number of at least 1. */
export function readCount(reader: Reader, field: Field): number | undefined {
  const value = isScalar(field.node) ? field.node.value : undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    const got = typeof value === "number" ? String(value) : describe(field.node);
    return reader.fail(field, `expected a whole number of at least 1, got ${got}`);
  }
  return value;
}

/** `agent_quota:` when the file has none. */
export function defaultAgentQuota(): AgentQuota {
  return { concurrentCalls: 64, requests: 60_000, windowMs: 60_000 };
}

const QUOTA_KEYS = ["sessions", "concurrent_calls", "requests", "window"] as const;

/** `agent_quota:` or `agents.NAME.quota:`: `sessions`, `concurrent_calls`, `requests` (counts) and `window`. */
export function readQuota(reader: Reader, field: Field): Partial<AgentQuota> {
  const quota: Partial<AgentQuota> = {};
  const entries =
    reader.entries(field, "a mapping of quota settings", { known: QUOTA_KEYS, allowNull: true }) ?? [];
  for (const entry of entries) {
    const key = entry.path.slice(field.path.length + 1);
    if (key === "window") {
      const ms = readTimeout(reader, entry);
      if (ms !== undefined) quota.windowMs = ms;
      continue;
    }
    const value = readCount(reader, entry);
    if (value === undefined) continue;
    if (key === "sessions") quota.sessions = value;
    else if (key === "concurrent_calls") quota.concurrentCalls = value;
    else quota.requests = value;
  }
  return quota;
}
