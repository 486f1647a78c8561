/**
 * What passes through besides tools: resources (list, templates, read, subscribe, updates),
 * prompts, completion, logging, and the server-to-client requests (sampling, elicitation,
 * roots). Every path is a relay that rewrites one name or URI on the way and nothing else,
 * so a raw JSON-RPC relay can serve it: resource URIs carry their server
 * (`mcphub://SERVER/…`, see uris.ts), prompt names are `server__prompt` (catalog naming).
 *
 * @module
 */
import { planNames, SEPARATOR } from "../catalog/mod.ts";
import type { Hub } from "../hub/hub.ts";
import { ProtocolError } from "../mcp/errors.ts";
import { invalidParams } from "../mcp/errors.ts";
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  ResultSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "../mcp/sdk.ts";
import type {
  Client,
  ClientCapabilities,
  HostServer,
  LoggingLevel,
  Prompt,
  RequestHandlerExtra,
  Result,
  ServerNotification,
  ServerRequest,
} from "../mcp/sdk.ts";
import { ServerUnavailableError } from "../downstream/downstream.ts";
import type { ServerOperation, Telemetry, TraceMeta } from "../telemetry/mod.ts";
import { parseJson } from "../json/mod.ts";
import { SessionRelay, severity } from "./relay.ts";
import { namespaceTemplate, namespaceUri, publishedBareUri, splitUri, URI_PREFIX } from "../hub/uris.ts";

// Defined with the early `initialize` answer (start-up time), which uses them before this module loads.
export {
  clipBytes,
  GATEWAY_CAPABILITIES,
  INSTRUCTIONS_PER_SERVER_BYTES,
  INSTRUCTIONS_TOTAL_BYTES,
  serverInstructions,
} from "./initialize.ts";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Params = Record<string, unknown>;

/** The `tool` a stored resources/read result is filed under (its `namespaced` is the URI read). */
export const READ_TOOL = "resources/read";

/** A position in a merged list: the server being listed and its own cursor there. */
interface MergedCursor {
  s: string;
  c?: string;
}

function encodeCursor(cursor: MergedCursor): string {
  return btoa(JSON.stringify(cursor)).replace(/=+$/, "");
}

function decodeCursor(text: string, method: string): MergedCursor {
  try {
    const value = parseJson(atob(text)) as MergedCursor | null;
    if (typeof value?.s === "string" && (value.c === undefined || typeof value.c === "string")) return value;
  } catch {
    // reported below
  }
  invalidParams(`${method}: invalid cursor (pass the nextCursor of the previous page unchanged)`);
}

/** The prompts of one session, with their public names. */
interface PromptTable {
  client: Client;
  prompts: Prompt[];
  /** Public name -> downstream name. */
  byPublic: Map<string, string>;
  /** Downstream name -> public name. */
  byDownstream: Map<string, string>;
}

/** A downstream JSON-RPC error as the gateway's own (no doubled "MCP error N:" prefix). */
function relayError(error: unknown): unknown {
  if (error instanceof ServerUnavailableError) {
    return new ProtocolError(
      ErrorCode.InvalidRequest,
      `${error.message}. Call list_servers for the state of every server.`,
    );
  }
  if (!(error instanceof McpError)) return error;
  const message = error.message.replace(/^(MCP error -?\d+: )+/, "");
  return new ProtocolError(error.code, message, { cause: error }, error.data);
}

/** Options of {@linkcode Passthrough}. */
export interface PassthroughOptions {
  log: (line: string) => void;
  /** Resolves when the servers' first connection attempts allow a complete answer (starts them if needed). */
  ready: () => Promise<void>;
  /** The relay of the hub's downstream sessions; undefined = a relay of its own (one host). */
  relay?: SessionRelay;
  /** A CLIENT operation per forwarded request (see telemetry/); undefined = none. */
  telemetry?: Telemetry;
  /** The host request a handler serves (its SERVER operation), the parent of what it forwards. */
  operation?: (extra: Extra) => ServerOperation | undefined;
  /** The gateway's own resources (code mode's declarations), listed first and read before any server's. */
  own?: OwnResources;
}

/** Resources the gateway serves itself. */
export interface OwnResources {
  /** Listed at the head of the first resources/list page. */
  resources(): Params[];
  /** The read of one of them; undefined when `uri` is not one (it is routed to a server). */
  read(uri: string): Promise<Result | undefined>;
}

/** The non-tool surface of one gateway session. */
export class Passthrough {
  #hub: Hub;
  #server: HostServer;
  #options: PassthroughOptions;
  /** Upstream calls in flight per server, latest last: server-to-client requests relate to them. */
  #inflight = new Map<string, { extra: Extra; seq: number }[]>();
  #prompts = new Map<string, PromptTable>();
  #relay: SessionRelay;
  #detach: () => void;
  /** This session's `logging/setLevel`; undefined = never set. */
  level?: LoggingLevel;
  /** What the host last listed (servers offering resources / prompts), to send list_changed on changes. */
  #listed: { resources?: string; prompts?: string } = {};
  #initialized = false;
  /** The URI this session subscribed with, per `SERVER\nURI` (downstream URI). */
  #subscribedAs = new Map<string, string>();

  constructor(hub: Hub, server: HostServer, options: PassthroughOptions) {
    this.#hub = hub;
    this.#server = server;
    this.#options = options;
    this.#relay = options.relay ?? new SessionRelay(hub, { shared: false, log: options.log });
    this.#detach = this.#relay.attach(this);
    const unsubscribe = hub.onChange(() => this.#onHubChange());
    const detach = this.#detach;
    this.#detach = () => (unsubscribe(), detach());

    server.setRequestHandler(ListResourcesRequestSchema, async (req, extra) => {
      const page = await this.#mergedList("resources/list", "resources", req.params, extra, (name, item) => ({
        ...item,
        uri: this.#uri(name, String(item.uri)),
      }));
      const own = req.params?.cursor === undefined ? options.own?.resources() ?? [] : [];
      return own.length ? { ...page, resources: [...own, ...page.resources as Params[]] } : page;
    });
    server.setRequestHandler(
      ListResourceTemplatesRequestSchema,
      (req, extra) =>
        this.#mergedList(
          "resources/templates/list",
          "resourceTemplates",
          req.params,
          extra,
          (name, item) => ({
            ...item,
            uriTemplate: this.#bare(name) && !String(item.uriTemplate).startsWith(URI_PREFIX)
              ? item.uriTemplate
              : namespaceTemplate(name, String(item.uriTemplate)),
          }),
        ),
    );
    server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
      const own = await options.own?.read(req.params.uri);
      if (own) return own;
      const { name, client, uri } = await this.#routeUri(req.params.uri, "resources/read");
      // The server's requests while it reads are this read's (input_required for a 2026-07-28 host).
      const release = this.track(name, extra);
      let result: Result;
      try {
        result = await this.#forward(client, "resources/read", { ...req.params, uri }, extra);
      } finally {
        release();
      }
      const contents = Array.isArray(result.contents) ? result.contents as Params[] : undefined;
      const read = contents
        ? {
          ...result,
          // The URI read comes back as the host sent it (as directly); others namespaced.
          contents: contents.map((c) =>
            typeof c.uri === "string"
              ? { ...c, uri: c.uri === uri && !this.#bare(name) ? req.params.uri : this.#uri(name, c.uri) }
              : c
          ),
        }
        : result;
      // Over response_budget: stored whole, answered with the receipt as the one content (get_result pages it).
      const finalized = await this.#hub.finalizeOther(read, {
        server: name,
        tool: READ_TOOL,
        namespaced: req.params.uri,
      });
      if (!finalized.spooled) return read;
      // The receipt's JSON (status, callId, sizes, preview, nextAction) is the one content.
      const receipt = JSON.stringify(finalized.result.structuredContent);
      return { contents: [{ uri: req.params.uri, mimeType: "application/json", text: receipt }] };
    });
    server.setRequestHandler(SubscribeRequestSchema, async (req, extra) => {
      const { name, client, uri } = await this.#routeUri(req.params.uri, "resources/subscribe");
      const result = await this.#forward(client, "resources/subscribe", { ...req.params, uri }, extra);
      this.#relay.subscribe(this, name, uri);
      // Its updates name the resource as the host did (an expanded template stays one).
      this.#subscribedAs.set(`${name}\n${uri}`, req.params.uri);
      return result;
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (req, extra) => {
      const { name, client, uri } = await this.#routeUri(req.params.uri, "resources/unsubscribe");
      // Another session still subscribed to the same resource keeps the server's subscription.
      this.#subscribedAs.delete(`${name}\n${uri}`);
      if (!this.#relay.unsubscribe(this, name, uri)) return {};
      return await this.#forward(client, "resources/unsubscribe", { ...req.params, uri }, extra);
    });
    server.setRequestHandler(ListPromptsRequestSchema, (req, extra) => this.#listPrompts(req.params, extra));
    server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
      const { name, client, prompt } = await this.#routePrompt(req.params.name, "prompts/get", extra);
      // The server's requests while it answers are this request's (as a tool call's: see track).
      const release = this.track(name, extra);
      let result: Result;
      try {
        result = await this.#forward(
          client,
          "prompts/get",
          { ...req.params, name: prompt },
          extra,
          undefined,
          prompt,
        );
      } finally {
        release();
      }
      return this.#bare(name) ? result : namespacePromptResult(name, result);
    });
    server.setRequestHandler(CompleteRequestSchema, async (req, extra) => {
      const ref = req.params.ref as Params;
      if (ref.type === "ref/prompt") {
        const { client, prompt } = await this.#routePrompt(String(ref.name), "completion/complete", extra);
        return await this.#forward(
          client,
          "completion/complete",
          {
            ...req.params,
            ref: { ...ref, name: prompt },
          },
          extra,
          undefined,
          prompt,
        );
      }
      if (ref.type === "ref/resource") {
        const { client, uri } = await this.#routeUri(String(ref.uri), "completion/complete");
        return await this.#forward(client, "completion/complete", {
          ...req.params,
          ref: { ...ref, uri },
        }, extra);
      }
      invalidParams(`completion/complete: unknown ref type ${JSON.stringify(ref.type)}`);
    });
    server.setRequestHandler(SetLevelRequestSchema, async (req, extra) => {
      await this.#settle();
      this.level = req.params.level;
      await this.#relay.setLevel(this.operationOf(extra));
      return {};
    });
    server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      for (const d of this.#hub.downstreams) {
        const client = d.client;
        if (client && (client as unknown as { _capabilities?: ClientCapabilities })._capabilities?.roots) {
          client.sendRootsListChanged().catch(() => {});
        }
      }
    });
  }

  /**
   * Waits for the servers' first connection attempts (bounded by startup_wait): unlike tools,
   * resources and prompts are not cached, so a server listed from the tool cache is waited for too.
   */
  async #settle(): Promise<void> {
    await this.#options.ready();
    const pending = this.#hub.downstreams.filter((d) => d.state === "connecting").map((d) => d.ready);
    const wait = this.#hub.config.startupWaitMs;
    if (!pending.length || wait <= 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(pending), new Promise((resolve) => timer = setTimeout(resolve, wait))]);
    clearTimeout(timer);
  }

  /** True for a `namespace: false` server: its names and URIs are published unchanged. */
  #bare(name: string): boolean {
    return this.#hub.downstream(name)?.config.namespace === false;
  }

  /** A server's resource URI as published. */
  #uri(name: string, uri: string): string {
    return this.#bare(name) ? publishedBareUri(name, uri) : namespaceUri(name, uri);
  }

  /** Marks the upstream session initialized: list_changed notifications may be sent from now on. */
  initialized(): void {
    this.#initialized = true;
  }

  /** Relates server-to-client requests of `server` to this upstream call while it runs. */
  track(server: string, extra: Extra): () => void {
    let calls = this.#inflight.get(server);
    if (!calls) this.#inflight.set(server, calls = []);
    const call = { extra, seq: this.#relay.nextSeq() };
    calls.push(call);
    return () => {
      const at = calls.indexOf(call);
      if (at >= 0) calls.splice(at, 1);
      if (!calls.length) this.#inflight.delete(server);
    };
  }

  /** This session's latest call to `server` still running. */
  latestCall(server: string): { extra: Extra; seq: number } | undefined {
    const calls = this.#inflight.get(server);
    return calls?.[calls.length - 1];
  }

  /** The host request `extra` is of (its SERVER operation), when traced. */
  operationOf(extra: Extra): ServerOperation | undefined {
    return this.#options.operation?.(extra);
  }

  /** The client capabilities this session's host declared (undefined before its initialize). */
  hostCapabilities(): ClientCapabilities | undefined {
    return this.#server.getClientCapabilities();
  }

  /** True when `server` is in this session's scope. */
  sees(server: string): boolean {
    return this.#hub.downstream(server) !== undefined;
  }

  /** A server's log message, with the server named, unless below this session's level. */
  logMessage(name: string, params: Params): void {
    if (this.level && severity(params.level) < severity(this.level)) return;
    const logger = params.logger ? `${name}/${params.logger}` : name;
    this.#notify("notifications/message", { ...params, logger });
  }

  /** A resource of `name` changed. */
  resourceUpdated(name: string, params: Params & { uri: string }): void {
    const uri = this.#subscribedAs.get(`${name}\n${params.uri}`) ?? this.#uri(name, params.uri);
    this.#notify("notifications/resources/updated", { ...params, uri });
  }

  /** A server's URL-mode elicitation completed (sent only to a host that offers URL mode). */
  elicitationComplete(params: Params): void {
    if ((this.hostCapabilities()?.elicitation as Params | undefined)?.url === undefined) return;
    this.#notify("notifications/elicitation/complete", params);
  }

  /** The resources of a server changed. */
  resourceListChanged(): void {
    if (this.#initialized) this.#server.sendResourceListChanged().catch(() => {});
  }

  /** The prompts of `name` changed. */
  promptListChanged(name: string): void {
    this.#prompts.delete(name);
    if (this.#initialized) this.#server.sendPromptListChanged().catch(() => {});
  }

  /** Ends this session's part in the relay (subscriptions, level). */
  close(): void {
    this.#detach();
  }

  #notify(method: string, params: Params): void {
    this.#server.notification({ method, params } as ServerNotification).catch(() => {});
  }

  /** A server-to-client request sent to this session's host, as part of `related` when given. */
  async requestHost(method: string, params: Params | undefined, signal: AbortSignal, related?: Extra) {
    const request = { method, params } as ServerRequest;
    // A human may take a while to answer: bounded by call_timeout, not the SDK's 60 s default.
    const options = { signal, timeout: this.#hub.config.callTimeoutMs };
    try {
      return related
        ? await related.sendRequest(request, ResultSchema, options)
        : await this.#server.request(request, ResultSchema, options);
    } catch (error) {
      throw relayError(error);
    }
  }

  #onHubChange(): void {
    for (const [name, table] of this.#prompts) {
      if (this.#hub.downstream(name)?.client !== table.client) this.#prompts.delete(name);
    }
    if (!this.#initialized) return;
    if (this.#listed.resources !== undefined) {
      const now = this.#offering("resources").join("\n");
      if (now !== this.#listed.resources) {
        this.#listed.resources = now;
        this.#server.sendResourceListChanged().catch(() => {});
      }
    }
    if (this.#listed.prompts !== undefined) {
      const now = this.#offering("prompts").join("\n");
      if (now !== this.#listed.prompts) {
        this.#listed.prompts = now;
        this.#server.sendPromptListChanged().catch(() => {});
      }
    }
  }

  /** Connected servers in scope offering a capability, in config order. */
  #offering(capability: "resources" | "prompts"): string[] {
    // An agent with an exact tool allowlist sees no resources (they are not among its tools).
    if (capability === "resources" && this.#hub.scope?.tools) return [];
    return this.#hub.downstreams
      .filter((d) => d.client?.getServerCapabilities()?.[capability])
      .map((d) => d.name);
  }

  /**
   * One request to a server; bounded by call_timeout, or `timeoutMs` (lists: connect_timeout). `prompt`:
   * the server's own name of the prompt it is about (`prompts/get`, a prompt's completion).
   */
  async #forward(
    client: Client,
    method: string,
    params: Params,
    extra: Extra,
    timeoutMs = this.#hub.config.callTimeoutMs,
    prompt?: string,
  ): Promise<Result> {
    try {
      return await this.#traced(client, method, extra, (meta) =>
        client.request(
          // The CLIENT span is the server's parent (in place of a traceparent the host sent, its own).
          {
            method,
            params: meta
              ? { ...params, _meta: { ...(params._meta as Params | undefined), ...meta } }
              : params,
          },
          ResultSchema,
          { signal: extra.signal, timeout: timeoutMs },
        ), prompt);
    } catch (error) {
      throw relayError(error);
    }
  }

  /**
   * A request to a server as a CLIENT operation under the host request `extra` serves: `send` gets the
   * operation's trace context for the request's `params._meta` (undefined when not tracing).
   */
  async #traced<T>(
    client: Client,
    method: string,
    extra: Extra | undefined,
    send: (meta?: TraceMeta) => Promise<T>,
    prompt?: string,
  ): Promise<T> {
    const telemetry = this.#options.telemetry;
    const d = telemetry && this.#hub.downstreams.find((d) => d.client === client);
    if (!d) return await send();
    const op = telemetry.client(extra && this.#options.operation?.(extra), {
      method: methodName(method),
      server: d.name,
      prompt,
      transport: d.config.url === undefined ? "pipe" : "tcp",
    });
    try {
      const result = await send(op.meta);
      op.end();
      return result;
    } catch (error) {
      op.fail(error, (text) => d.redact(text));
      throw error;
    }
  }

  /** A session of a server in scope, or the error a direct connection would not need. */
  async #session(name: string, method: string, what: string): Promise<Client> {
    const d = this.#hub.downstream(name);
    if (!d) {
      throw new ProtocolError(
        ErrorCode.ResourceNotFound,
        `${method}: ${what} not found (no server "${name}" in scope)`,
      );
    }
    try {
      return await d.session();
    } catch (error) {
      throw relayError(error);
    }
  }

  async #routeUri(uri: string, method: string): Promise<{ name: string; client: Client; uri: string }> {
    await this.#settle();
    // A URI that is not mcphub:// belongs to the first `namespace: false` server offering resources.
    const bare = this.#offering("resources").find((name) => this.#bare(name));
    const split = splitUri(uri) ?? (bare ? { server: bare, uri } : undefined);
    if (!split) {
      throw new ProtocolError(
        ErrorCode.ResourceNotFound,
        `${method}: resource ${JSON.stringify(uri.slice(0, 200))} not found: resources behind mcphub are ` +
          "named mcphub://SERVER/ENCODED-URI (see resources/list)",
      );
    }
    if (this.#hub.scope?.tools) {
      throw new ProtocolError(
        ErrorCode.ResourceNotFound,
        `${method}: resource ${JSON.stringify(uri.slice(0, 200))} not found`,
      );
    }
    const client = await this.#session(split.server, method, `resource ${JSON.stringify(uri.slice(0, 200))}`);
    return { name: split.server, client, uri: split.uri };
  }

  /**
   * One page of a list merged across servers in config order. The cursor names the server being
   * listed and its own cursor there; a server's last page moves on to the next server.
   */
  async #mergedList(
    method: string,
    key: string,
    params: Params | undefined,
    extra: Extra,
    rewrite: (server: string, item: Params) => Params,
  ): Promise<Result> {
    await this.#settle();
    const servers = this.#offering("resources");
    if (method === "resources/list") this.#listed.resources = servers.join("\n");
    let at = 0;
    let cursor: string | undefined;
    if (typeof params?.cursor === "string") {
      const position = decodeCursor(params.cursor, method);
      at = servers.indexOf(position.s);
      if (at < 0) invalidParams(`${method}: the cursor names server "${position.s}", which is not connected`);
      cursor = position.c;
    }
    for (; at < servers.length; at++, cursor = undefined) {
      const name = servers[at]!;
      const client = this.#hub.downstream(name)!.client;
      if (!client) continue;
      let page: Result;
      try {
        // A server that does not answer a list in connect_timeout is skipped (logged), not waited for.
        page = await this.#forward(
          client,
          method,
          cursor ? { cursor } : {},
          extra,
          this.#hub.config.connectTimeoutMs,
        );
      } catch (error) {
        this.#options.log(`server "${name}": ${method} failed: ${(error as Error).message}`);
        continue;
      }
      const items = Array.isArray(page[key]) ? (page[key] as Params[]).map((i) => rewrite(name, i)) : [];
      const next = typeof page.nextCursor === "string"
        ? encodeCursor({ s: name, c: page.nextCursor })
        : servers[at + 1] !== undefined
        ? encodeCursor({ s: servers[at + 1]! })
        : undefined;
      if (!items.length && next !== undefined && typeof page.nextCursor !== "string") continue;
      return next === undefined ? { [key]: items } : { [key]: items, nextCursor: next };
    }
    return { [key]: [] };
  }

  /** A server's prompts with their public names (listed once per session and list_changed). */
  async #promptTable(name: string, client: Client, extra?: Extra): Promise<PromptTable> {
    const known = this.#prompts.get(name);
    if (known && known.client === client) return known;
    const prompts: Prompt[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    do {
      const page = await this.#traced(
        client,
        "prompts/list",
        extra,
        (meta) =>
          client.listPrompts({ ...(cursor ? { cursor } : {}), ...(meta ? { _meta: { ...meta } } : {}) }, {
            signal: extra?.signal,
            timeout: this.#hub.config.connectTimeoutMs,
          }),
      );
      prompts.push(...page.prompts);
      cursor = page.nextCursor;
      if (cursor !== undefined && seen.has(cursor)) break;
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
    const byPublic = new Map<string, string>();
    const byDownstream = new Map<string, string>();
    const names = prompts.map((p) => p.name);
    const plans = this.#bare(name)
      ? names.map((n) => ({ downstream: n, namespaced: n }))
      : planNames(name, names);
    for (const plan of plans) {
      byPublic.set(plan.namespaced, plan.downstream);
      byDownstream.set(plan.downstream, plan.namespaced);
    }
    const table = { client, prompts, byPublic, byDownstream };
    this.#prompts.set(name, table);
    return table;
  }

  /** Prompts in scope: every prompt of a server in scope, or for an agent with a tool allowlist those it names. */
  #promptInScope(publicName: string): boolean {
    const allow = this.#hub.scope?.tools;
    return !allow || allow.includes(publicName);
  }

  async #listPrompts(_params: Params | undefined, extra: Extra): Promise<Result> {
    await this.#settle();
    const servers = this.#offering("prompts");
    this.#listed.prompts = servers.join("\n");
    const out: Prompt[] = [];
    for (const name of servers) {
      const client = this.#hub.downstream(name)!.client;
      if (!client) continue;
      let table: PromptTable;
      try {
        table = await this.#promptTable(name, client, extra);
      } catch (error) {
        this.#options.log(`server "${name}": prompts/list failed: ${(error as Error).message}`);
        continue;
      }
      for (const prompt of table.prompts) {
        const publicName = table.byDownstream.get(prompt.name)!;
        if (!this.#promptInScope(publicName)) continue;
        if (this.#bare(name)) {
          out.push({ ...prompt, server: name } as Prompt);
          continue;
        }
        out.push({
          ...prompt,
          name: publicName,
          ...(prompt.description !== undefined ? { description: `[${name}] ${prompt.description}` } : {}),
          server: name,
        } as Prompt);
      }
    }
    // A `namespace: false` server's prompt whose name another server also publishes is left out.
    const count = new Map<string, number>();
    for (const p of out) count.set(p.name, (count.get(p.name) ?? 0) + 1);
    return {
      prompts: out.filter((p) => {
        const server = (p as { server?: string }).server!;
        delete (p as { server?: string }).server;
        if (count.get(p.name)! < 2 || !this.#bare(server)) return true;
        this.#options.log(
          `prompt "${p.name}" of server "${server}" (namespace: false) collides with another server's and is not listed`,
        );
        return false;
      }),
    };
  }

  async #routePrompt(
    publicName: string,
    method: string,
    extra?: Extra,
  ): Promise<{ name: string; client: Client; prompt: string }> {
    await this.#settle();
    const at = publicName.indexOf(SEPARATOR);
    let name = at > 0 ? publicName.slice(0, at) : "";
    if (!this.#hub.downstream(name) || this.#bare(name)) {
      // An unprefixed name: the `namespace: false` server that has it (none if two do).
      const owners: string[] = [];
      for (const server of this.#offering("prompts").filter((s) => this.#bare(s))) {
        const client = this.#hub.downstream(server)!.client!;
        const table = await this.#promptTable(server, client, extra).catch(() => undefined);
        if (table?.byPublic.has(publicName)) owners.push(server);
      }
      const prefixed = at > 0 && this.#hub.downstream(name) && !this.#bare(name);
      name = owners.length === 1 && !prefixed ? owners[0]! : "";
    }
    const unknown = () =>
      invalidParams(
        `${method}: unknown prompt ${JSON.stringify(publicName.slice(0, 128))}; prompts behind mcphub are ` +
          "named server__prompt (see prompts/list)",
      );
    if (!name || !this.#promptInScope(publicName) || !this.#hub.downstream(name)) unknown();
    const client = await this.#session(name, method, `prompt ${JSON.stringify(publicName.slice(0, 128))}`);
    const table = await this.#promptTable(name, client, extra).catch((error) => {
      throw relayError(error);
    });
    const prompt = table.byPublic.get(publicName);
    if (prompt === undefined) unknown();
    return { name, client, prompt: prompt! };
  }
}

/** A prompts/get result with its embedded resources and resource links pointing through the gateway. */
function namespacePromptResult(server: string, result: Result): Result {
  if (!Array.isArray(result.messages)) return result;
  return {
    ...result,
    messages: (result.messages as Params[]).map((m) => {
      const c = m.content as Params | undefined;
      if (c?.type === "resource_link" && typeof c.uri === "string") {
        return { ...m, content: { ...c, uri: namespaceUri(server, c.uri) } };
      }
      const r = c?.resource as Params | undefined;
      if (c?.type === "resource" && typeof r?.uri === "string") {
        return { ...m, content: { ...c, resource: { ...r, uri: namespaceUri(server, r.uri) } } };
      }
      return m;
    }),
  };
}

/** The MCP methods forwarded here, as the conventions name them (`mcp.method.name`); others `_OTHER`. */
function methodName(method: string): string {
  return FORWARDED.has(method) ? method : "_OTHER";
}

const FORWARDED = new Set([
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
]);
