/**
 * One entry of `agents:`: which servers and tools an agent sees, its pins and its schema budget.
 *
 * @module
 */
import type { AgentConfig } from "./types.ts";
import type { Field, Reader } from "./reader.ts";
import { checkServerPart, nameProblem, readPins, unknownServer } from "./rules.ts";
import { readSize } from "./settings.ts";
import { readQuota, readToken } from "./listen.ts";

const AGENT_KEYS = ["servers", "tools", "pin", "tool_schema_budget", "token", "code_mode", "quota"] as const;

/** Reads one agent; `servers` are the configured server names. */
export function readAgent(
  reader: Reader,
  field: Field,
  name: string,
  servers: readonly string[],
): AgentConfig {
  const problem = nameProblem(name, "agent");
  if (problem) reader.failKey(field, problem);
  const agent: AgentConfig = { name };
  const entries =
    reader.entries(field, "a mapping of agent settings", { known: AGENT_KEYS, allowNull: true }) ??
      [];
  const keys = new Map(entries.map((entry) => [entry.path.slice(field.path.length + 1), entry]));

  const serversField = keys.get("servers");
  if (serversField) {
    const items = reader.items(
      serversField,
      'a list of server names ([] for none; leave "servers" out for all)',
    );
    if (items) {
      agent.servers = [];
      for (const item of items) {
        const server = reader.string(item, { nonEmpty: true });
        if (server === undefined) continue;
        if (!servers.includes(server)) reader.fail(item, unknownServer(server, servers));
        else if (!agent.servers.includes(server)) agent.servers.push(server);
      }
    }
  }
  const scope = agent.servers;

  const toolsField = keys.get("tools");
  if (toolsField) {
    const items = reader.items(toolsField, 'a list of public tool names ("server__tool"; [] for none)');
    if (items) {
      agent.tools = [];
      for (const item of items) {
        const tool = reader.string(item, { nonEmpty: true });
        if (tool === undefined) continue;
        const separator = tool.indexOf("__");
        if (separator <= 0 || separator + 2 === tool.length || tool.includes("*") || /\s/.test(tool)) {
          reader.fail(
            item,
            `expected an exact public tool name "server__tool", got "${tool}"; to allow every tool of a server, ` +
              `list it under "servers" and leave "tools" out`,
          );
          continue;
        }
        if (checkServerPart(reader, item, tool, servers, scope)) agent.tools.push(tool);
      }
    }
  }

  const pinField = keys.get("pin");
  if (pinField) {
    const pins = readPins(reader, pinField, servers, scope);
    if (pins) agent.pin = pins;
  }

  const budgetField = keys.get("tool_schema_budget");
  if (budgetField) {
    const budget = readSize(reader, budgetField);
    if (budget !== undefined) agent.toolSchemaBudget = budget;
  }

  const codeField = keys.get("code_mode");
  if (codeField) {
    const on = reader.boolean(codeField);
    if (on !== undefined) agent.codeMode = on;
  }

  const tokenField = keys.get("token");
  if (tokenField) {
    const token = readToken(reader, tokenField);
    if (token !== undefined) agent.token = token;
  }

  const quotaField = keys.get("quota");
  if (quotaField) agent.quota = readQuota(reader, quotaField);
  return agent;
}
