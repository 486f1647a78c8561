/**
 * `mcphub approve server__tool | server | --all` and `mcphub tools changes`: review and accept tool
 * definitions that the gateway holds because they changed since they were approved (the rug-pull
 * defence, see `trust:`). A running gateway mounts an approved tool within about two seconds (and
 * tells its host with list_changed); so does the next start.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { storeLocationOf } from "./host.ts";
import { isPostgresUrl, openStore } from "../store/mod.ts";
import { openPgStore } from "./store_access.ts";
import { canonicalJson } from "../catalog/mod.ts";
import { parseJson } from "../json/mod.ts";
import { PgToolPins, type ToolChange, toolPinMigrations, ToolPins } from "../trust/mod.ts";

const APPROVE_HELP = `Usage: mcphub approve SERVER__TOOL | SERVER | --all

Accepts the held definition of one tool, of every held tool of one server, or
of every held tool: it becomes the pinned definition. A tool is held when its
definition (name, title, description, input or output schema, annotations)
changed since it was first seen or last approved (trust: changes, the
default), or when it is new on a server with trust: pin. Review first with
\`mcphub tools changes\`. A running gateway mounts the tool within about
2 s and tells its host (tools/list_changed).
`;

const CHANGES_HELP = `Usage: mcphub tools changes [SERVER] [--json]

Shows every held tool definition next to the approved one: which fields
changed, when, and a line diff of each changed field. Approve with
\`mcphub approve SERVER__TOOL\`.
`;

/** What both stores' pins offer these commands (SQLite answers at once, PostgreSQL later). */
interface PinReview {
  approve(server?: string, tool?: string): Promise<{ server: string; tool: string }[]>;
  changes(server?: string): Promise<ToolChange[]>;
}

async function withPins<T>(
  location: string,
  env: CommandContext["env"],
  use: (pins: PinReview) => Promise<T>,
): Promise<T> {
  if (isPostgresUrl(location)) {
    const store = openPgStore(location, env);
    try {
      return await use(new PgToolPins(store));
    } finally {
      await store.close();
    }
  }
  const db = openStore(location, { migrations: toolPinMigrations });
  try {
    const pins = new ToolPins(db);
    return await use({
      approve: (server, tool) => Promise.resolve(pins.approve(server, tool)),
      changes: (server) => Promise.resolve(pins.changes(server)),
    });
  } finally {
    db.close();
  }
}

/** `approve`. */
export const approveCommand: Command = {
  name: "approve",
  summary: "Accept held (changed or new) tool definitions",
  help: APPROVE_HELP,
  async run(ctx) {
    const { values, positionals } = parseCommandArgs(
      "approve",
      () =>
        parseArgs({
          args: ctx.args,
          options: { all: { type: "boolean" } },
          strict: true,
          allowPositionals: true,
        }),
    );
    if ((positionals.length === 1) === Boolean(values.all)) {
      throw new UsageError("name one tool (server__tool) or one server, or pass --all", "approve");
    }
    const target = positionals[0];
    const at = target?.indexOf("__") ?? -1;
    const server = target === undefined ? undefined : at < 0 ? target : target.slice(0, at);
    const tool = target !== undefined && at >= 0 ? target.slice(at + 2) : undefined;
    const approved = await withPins(await storeLocationOf(ctx), ctx.env, async (pins) => {
      let done = await pins.approve(server, tool);
      // A public name may lack the server's self-prefix (github__create_issue for github_create_issue).
      if (done.length === 0 && server !== undefined && tool !== undefined) {
        for (const sep of ["_", "-", "__"]) {
          done = done.length ? done : await pins.approve(server, `${server}${sep}${tool}`);
        }
      }
      return done;
    });
    if (approved.length === 0) {
      ctx.err(
        `nothing to approve${
          target ? ` for "${target}"` : ""
        }: no held tool definitions (see \`mcphub tools changes\`)\n`,
      );
      return 1;
    }
    for (const a of approved) ctx.out(`approved ${a.server}__${a.tool}\n`);
    return 0;
  },
};

/** Lines of `before` and `after` as `- ` / `+ ` / `  ` lines (a longest-common-subsequence diff, bounded). */
export function lineDiff(before: string, after: string): string[] {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > 4_000_000) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) out.push(`  ${a[i++]}`), j++;
    else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! > lcs[i + 1]![j]!)) out.push(`+ ${b[j++]}`);
    else out.push(`- ${a[i++]}`);
  }
  return out;
}

function fieldText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(parseJson(canonicalJson(value)), null, 2);
}

function describeChange(c: ToolChange): string[] {
  const lines = [
    `${c.server}__${c.tool}: ${c.status} (${c.fields.join(", ")}) since ${new Date(c.since).toISOString()}`,
  ];
  for (const field of c.fields) {
    lines.push(`  ${field}:`);
    for (const l of lineDiff(fieldText(c.before?.[field]), fieldText(c.after[field]))) lines.push(`    ${l}`);
  }
  lines.push(`  approve: mcphub approve ${c.server}__${c.tool}`);
  return lines;
}

/** `tools changes`. */
export const toolsChangesCommand: Command = {
  name: "tools changes",
  summary: "Show held tool definitions and what changed",
  help: CHANGES_HELP,
  async run(ctx) {
    const { values, positionals } = parseCommandArgs(
      "tools changes",
      () =>
        parseArgs({
          args: ctx.args,
          options: { json: { type: "boolean" } },
          strict: true,
          allowPositionals: true,
        }),
    );
    if (positionals.length > 1) throw new UsageError("name at most one server", "tools changes");
    const changes = await withPins(
      await storeLocationOf(ctx),
      ctx.env,
      (pins) => pins.changes(positionals[0]),
    );
    if (values.json || ctx.global.json) {
      ctx.out(
        JSON.stringify(
          changes.map((c) => ({ ...c, since: new Date(c.since).toISOString() })),
          null,
          2,
        ) + "\n",
      );
      return 0;
    }
    if (changes.length === 0) {
      ctx.out("No held tool definitions.\n");
      return 0;
    }
    ctx.out(changes.flatMap(describeChange).join("\n") + "\n");
    return 0;
  },
};
