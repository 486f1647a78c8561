/**
 * `mcphub search "query"` and `mcphub describe server__tool`: the discovery
 * meta-tools for humans, on the same code path, against the configured servers.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { loadContextConfig } from "./host.ts";
import { VERSION } from "./version.ts";
import { DEFAULT_RESTART_POLICY } from "../downstream/mod.ts";

/** A one-shot command connects once: no restarts. */
const ONE_SHOT = { ...DEFAULT_RESTART_POLICY, maxFailures: 0 };
import { describeTool, Hub, searchTools } from "../hub/mod.ts";
import { formatTable } from "./table.ts";
import { formatDescribe } from "./describe_view.ts";
import { showConnectProgress } from "./progress.ts";
import { cliWords, nameAsQuery } from "./cli_words.ts";

async function withHub<T>(
  ctx: CommandContext,
  agent: string | undefined,
  run: (hub: Hub) => Promise<T>,
): Promise<T> {
  const config = await loadContextConfig(ctx, agent);
  const hub = new Hub({
    config,
    agent,
    env: ctx.env.toObject(),
    version: VERSION,
    log: () => {},
    restartPolicy: ONE_SHOT,
  });
  const progressDone = showConnectProgress(hub, ctx);
  try {
    await hub.start();
    progressDone();
    return await run(hub);
  } finally {
    progressDone();
    await hub.close();
  }
}

function parse(ctx: CommandContext, name: string) {
  return parseCommandArgs(name, () =>
    parseArgs({
      args: ctx.args,
      options: { json: { type: "boolean" }, agent: { type: "string" }, max: { type: "string" } },
      strict: true,
      allowPositionals: true,
    }));
}

/** `search`. */
export const searchCommand: Command = {
  name: "search",
  summary: "Search the configured servers' tools, ranked (what search_tools answers)",
  help: `Usage: mcphub search "what you want to do" [--max N] [--agent NAME] [--json]

Connects to the configured servers and ranks their tools for the query, exactly as the
search_tools meta-tool does. An empty query lists every tool by name.
`,
  async run(ctx) {
    const { values, positionals } = parse(ctx, "search");
    if (positionals.length > 1) throw new UsageError("put the query in quotes: one argument", "search");
    const max = values.max === undefined ? undefined : Number(values.max);
    if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
      throw new UsageError("--max must be a positive whole number", "search");
    }
    return await withHub(ctx, values.agent, async (hub) => {
      let result: Record<string, unknown>;
      try {
        result = await searchTools(hub, { query: positionals[0] ?? "", max_hits: max });
      } catch (error) {
        const message = (error as Error).message.replace(/^MCP error -?\d+: /, "");
        throw new Error(cliWords(message, positionals[0] ?? ""), { cause: error });
      }
      const down = hub.servers().filter((s) => s.state !== "connected" && s.state !== "disabled");
      if (down.length) {
        ctx.err(
          `mcphub: not searched: ${down.map((s) => `${s.name} (${s.state})`).join(", ")}; ` +
            "`mcphub list` shows why\n",
        );
      }
      if (values.json || ctx.global.json) {
        ctx.out(JSON.stringify(result, null, 2) + "\n");
        return Promise.resolve(0);
      }
      const matches = result.matches as { namespaced: string; score: number; description: string }[];
      if (matches.length === 0) {
        ctx.out(
          `No tool matches "${positionals[0]}". Try other words, or \`mcphub search ""\` to list all.\n`,
        );
        return Promise.resolve(0);
      }
      ctx.out(formatTable(
        ["TOOL", "SCORE", "DESCRIPTION"],
        matches.map((m) => [m.namespaced, m.score.toFixed(2), m.description.split("\n")[0]!.slice(0, 100)]),
        new Set([1]),
      ));
      if (result.truncated) ctx.out(`(${result.returned} of ${result.count} shown; --max N for more)\n`);
      return Promise.resolve(0);
    });
  },
};

/** `describe`. */
export const describeCommand: Command = {
  name: "describe",
  summary: "Show one tool's description and input schema (what describe_tool answers)",
  help: `Usage: mcphub describe server__tool [--agent NAME] [--json]

Connects to the configured servers and shows the tool: its description, then each argument
with its type, whether it is required, its default and description (and the fields of its
structured output). --json prints the describe_tool meta-tool's answer with the full JSON
input schema.
`,
  async run(ctx) {
    const { values, positionals } = parse(ctx, "describe");
    if (positionals.length !== 1) throw new UsageError("name one tool: server__tool", "describe");
    return await withHub(ctx, values.agent, async (hub) => {
      try {
        const result = await describeTool(hub, { tool: positionals[0] });
        ctx.out(
          values.json || ctx.global.json
            ? JSON.stringify(result, null, 2) + "\n"
            : formatDescribe(result as Record<string, unknown>),
        );
        return 0;
      } catch (error) {
        const message = (error as Error).message.replace(/^MCP error -?\d+: /, "");
        const down = /^(?:describe_tool: )?server "/.test(message)
          ? "; `mcphub list` shows every server's state"
          : "";
        throw new Error(cliWords(message, nameAsQuery(positionals[0]!)) + down, { cause: error });
      }
    });
  },
};
