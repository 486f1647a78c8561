/**
 * `mcphub mcp connect URL`: a stdio-to-HTTP bridge to a gateway started with `mcp serve --listen`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { stderrLogger } from "./host.ts";
import { bridge } from "../http/mod.ts";

const HELP = `Usage: mcphub mcp connect URL [--token TOKEN]

Bridges stdin/stdout to a gateway served with mcp serve --listen, so a host
that starts only stdio servers can use a shared gateway. URL is the gateway's
MCP endpoint, e.g. http://127.0.0.1:8080/mcp. The token is the agent's bearer
token; prefer MCPHUB_TOKEN in the environment (a --token value is visible to
other local users in the process list).

Options:
  --token TOKEN   Bearer token (default: $MCPHUB_TOKEN)

Host config:
{
  "mcpServers": {
    "mcphub": {
      "command": "mcphub",
      "args": ["mcp", "connect", "http://127.0.0.1:8080/mcp"],
      "env": { "MCPHUB_TOKEN": "..." }
    }
  }
}
`;

/** `mcp connect`. */
export const connectCommand: Command = {
  name: "mcp connect",
  summary: "Bridge stdin/stdout to a gateway served over HTTP (mcp serve --listen)",
  help: HELP,
  async run(ctx: CommandContext): Promise<number> {
    const { values, positionals } = parseCommandArgs("mcp connect", () =>
      parseArgs({
        args: ctx.args,
        options: { token: { type: "string" } },
        strict: true,
        allowPositionals: true,
      }));
    if (positionals.length !== 1) {
      throw new UsageError(
        "expected one URL, e.g. mcphub mcp connect http://127.0.0.1:8080/mcp",
        "mcp connect",
      );
    }
    let url: URL;
    try {
      url = new URL(positionals[0]);
    } catch {
      throw new UsageError(`"${positionals[0]}" is not a URL; e.g. http://127.0.0.1:8080/mcp`, "mcp connect");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new UsageError(`"${positionals[0]}" is not an http(s) URL`, "mcp connect");
    }
    const token = values.token ?? ctx.env.get("MCPHUB_TOKEN");
    const log = stderrLogger(ctx);
    const stopped = Promise.withResolvers<void>();
    const stop = () => stopped.resolve();
    ctx.signal.addEventListener("abort", stop, { once: true });
    try {
      await Promise.race([
        bridge({ url, token, input: Deno.stdin.readable, output: Deno.stdout.writable, log }),
        stopped.promise,
      ]);
    } finally {
      ctx.signal.removeEventListener("abort", stop);
    }
    return 0;
  },
};
