/**
 * `mcphub pin` / `unpin`: the tools listed even in lazy mode, edited in mcphub.yaml. `pin --top N`
 * pins the most-called tools recorded in the store.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Document, isScalar, isSeq, type Node, YAMLSeq } from "yaml";
import { type Command, type CommandContext, parseCommandArgs, UsageError } from "./command.ts";
import { storeLocationOf } from "./host.ts";
import { withStoreReader } from "./store_access.ts";
import {
  type ConfigTarget,
  editDocument,
  findPair,
  insertPair,
  refersTo,
  rootMap,
  serverNames,
  stringItems,
  targetConfig,
} from "./config_commands.ts";
import { redactDbUrl } from "../store/mod.ts";
import { intelligenceMigrations, parseSince, SINCE_FORMS, topTools } from "../intelligence/mod.ts";

const PIN_HELP = `Usage: mcphub pin [server | server__tool | server__* …] [--top N [--since D]]

Without arguments, lists the pins of mcphub.yaml. Pins are the tools an agent always sees in
lazy mode (expose: lazy): a whole server ("server" or "server__*") or one tool ("server__tool",
the public name). The pin list is kept sorted and without duplicates.

Options:
  --top N     Also pin the N most-called tools recorded in the store whose server is still configured.
  --since D   With --top: count only calls in the last D (30m, 24h, 7d, 2w).

Global: --config PATH, --db PATH (for --top; else $MCPHUB_DB, else ~/.local/share/mcphub/mcphub.db),
--json (the listing as JSON).
`;

const UNPIN_HELP = `Usage: mcphub unpin server | server__tool | server__* …

Removes pins from mcphub.yaml. A bare server name removes every pin of that server
("server", "server__*" and each "server__tool").
`;

/** The server part of a pin. */
function serverOf(pin: string): string {
  const separator = pin.indexOf("__");
  return separator === -1 ? pin : pin.slice(0, separator);
}

/** Whether `pin` adds nothing to `pins`: already there, or its whole server is pinned. */
function covered(pin: string, pins: ReadonlySet<string>): boolean {
  const server = serverOf(pin);
  return pins.has(pin) || pins.has(server) || pins.has(`${server}__*`);
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reads the global pins of the document. */
function currentPins(doc: Document): string[] {
  return stringItems(findPair(rootMap(doc), "pin")?.value);
}

/** Replaces the global pin list with `pins`, reusing the existing item nodes (and their comments). */
function writePins(doc: Document, pins: readonly string[]): void {
  const root = rootMap(doc);
  const pair = findPair(root, "pin");
  const seq = isSeq(pair?.value) ? pair.value : new YAMLSeq();
  const nodes = new Map<string, Node>();
  for (const item of seq.items) {
    if (isScalar(item) && typeof item.value === "string" && !nodes.has(item.value)) {
      nodes.set(item.value, item);
    }
  }
  seq.items = pins.map((pin) => nodes.get(pin) ?? doc.createNode(pin));
  if (!pair) insertPair(root, doc.createPair("pin", seq), ["expose", "version"]);
  else if (pair.value !== seq) pair.value = seq;
}

/** A recorded tool as a pin: the public name recorded with the call, else `server__tool`. */
function recordedPin(top: { namespaced: string; server: string; tool: string }): string {
  return top.namespaced.startsWith(`${top.server}__`) && top.namespaced.length > top.server.length + 2
    ? top.namespaced
    : `${top.server}__${top.tool}`;
}

/** Whether the validator takes `pin` as written (no whitespace; a recorded tool name has no `*`). */
function pinnable(pin: string): boolean {
  return !/[\s*]/.test(pin);
}

/** Every recorded tool, most-called first; undefined (and no database created) when there is no store. */
async function recordedTools(
  ctx: CommandContext,
  since: number | undefined,
): Promise<{ server: string; pin: string }[] | undefined> {
  // All of them: tools of servers no longer configured are skipped, and N must still be reached.
  return await withStoreReader(
    await storeLocationOf(ctx),
    { migrations: intelligenceMigrations, env: ctx.env },
    async (db) =>
      (await topTools(db, { limit: Number.MAX_SAFE_INTEGER, since })).map((top) => ({
        server: top.server,
        pin: recordedPin(top),
      })),
  );
}

function parseTop(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n >= 1 && Number.isSafeInteger(n))) {
    throw new UsageError(`Invalid --top "${text}": use a positive whole number`, "pin");
  }
  return n;
}

async function listPins(ctx: CommandContext, target: ConfigTarget, json: boolean): Promise<number> {
  let pins: string[] = [];
  // A read through the editor: validated like an edit, never written, and no ${VAR} is needed.
  await editDocument(ctx, target, (doc) => {
    pins = currentPins(doc);
    return false;
  });
  if (json) ctx.out(`${JSON.stringify({ config: target.path, pin: pins }, null, 2)}\n`);
  else if (pins.length === 0) {
    ctx.out(`No pins in ${target.display}. Add some with: mcphub pin server__tool (or mcphub pin --top 5)\n`);
  } else ctx.out(pins.map((pin) => `${pin}\n`).join(""));
  return 0;
}

/** Options for {@linkcode createPinCommand}. */
export interface PinCommandOptions {
  /** The clock `--since` counts back from. @default Date.now */
  now?: () => number;
}

async function runPin(ctx: CommandContext, now: () => number): Promise<number> {
  const { values, positionals } = parseCommandArgs("pin", () =>
    parseArgs({
      args: ctx.args,
      strict: true,
      allowPositionals: true,
      options: {
        top: { type: "string" },
        since: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }), "; pin accepts server, server__tool, server__*, --top N and --since D");
  if (values.help) {
    ctx.out(PIN_HELP);
    return 0;
  }
  if (values.since !== undefined && values.top === undefined) {
    throw new UsageError("--since only applies with --top N", "pin");
  }
  const top = values.top === undefined ? undefined : parseTop(values.top);
  let since: number | undefined;
  if (values.since !== undefined) {
    try {
      since = now() - parseSince(values.since);
    } catch (error) {
      throw new UsageError(`Invalid --since "${values.since}": use ${SINCE_FORMS}`, "pin", { cause: error });
    }
  }
  const target = targetConfig(ctx);
  if (positionals.length === 0 && top === undefined) {
    return await listPins(ctx, target, Boolean(values.json || ctx.global.json));
  }

  const recorded = top === undefined ? [] : await recordedTools(ctx, since);
  const added: string[] = [];
  const already: string[] = [];
  const gone = new Set<string>();
  let ranked = 0;
  const written = await editDocument(ctx, target, (doc) => {
    const pins = new Set(currentPins(doc));
    const consider = (pin: string) => {
      if (covered(pin, pins)) {
        if (!added.includes(pin) && !already.includes(pin)) already.push(pin);
        return;
      }
      pins.add(pin);
      added.push(pin);
    };
    for (const pin of positionals) consider(pin);
    if (top !== undefined && recorded) {
      const configured = new Set(serverNames(doc));
      const chosen = new Set<string>();
      for (const { server, pin } of recorded) {
        if (chosen.size >= top) break;
        if (!configured.has(server)) {
          gone.add(server);
          continue;
        }
        if (!pinnable(pin) || chosen.has(pin)) continue;
        chosen.add(pin);
      }
      ranked = chosen.size;
      for (const pin of chosen) consider(pin);
    }
    if (added.length === 0) return false;
    writePins(doc, [...pins].sort(byCodeUnit));
    return true;
  });

  if (top !== undefined && recorded === undefined) {
    ctx.err(
      `note: no calls are recorded yet (no store at ${
        redactDbUrl(await storeLocationOf(ctx))
      }); run the gateway first\n`,
    );
  } else if (top !== undefined && ranked < top) {
    ctx.err(`note: only ${ranked} recorded tool${ranked === 1 ? "" : "s"} of configured servers to pin\n`);
  }
  if (gone.size) ctx.err(`note: skipped tools of servers no longer configured: ${[...gone].join(", ")}\n`);
  if (written) ctx.out(`pinned: ${added.sort(byCodeUnit).join(", ")}\n`);
  if (already.length) ctx.out(`already pinned: ${already.join(", ")}\n`);
  if (!written) ctx.out("nothing changed\n");
  return 0;
}

/** Builds the `pin` command; tests inject the clock. */
export function createPinCommand(options: PinCommandOptions = {}): Command {
  const now = options.now ?? Date.now;
  return {
    name: "pin",
    summary: "List pins, or pin servers and tools (--top N: the most-called)",
    help: PIN_HELP,
    run: (ctx) => runPin(ctx, now),
  };
}

/** `mcphub pin`. */
export const pinCommand: Command = createPinCommand();

async function runUnpin(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs("unpin", () =>
    parseArgs({
      args: ctx.args,
      strict: true,
      allowPositionals: true,
      options: { help: { type: "boolean", short: "h" } },
    }));
  if (values.help) {
    ctx.out(UNPIN_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError("unpin needs a server or tool to unpin", "unpin");
  const target = targetConfig(ctx);
  const removed: string[] = [];
  const missing: string[] = [];
  const written = await editDocument(ctx, target, (doc) => {
    const seq = findPair(rootMap(doc), "pin")?.value;
    const items = isSeq(seq) ? seq.items : [];
    const text = (item: unknown) => isScalar(item) && typeof item.value === "string" ? item.value : undefined;
    for (const arg of positionals) {
      const bare = !arg.includes("__");
      const hit = (pin: string | undefined) => pin !== undefined && (bare ? refersTo(pin, arg) : pin === arg);
      const matches = items.map(text).filter(hit) as string[];
      if (matches.length === 0 && !removed.some(hit)) missing.push(arg);
      for (const pin of matches) if (!removed.includes(pin)) removed.push(pin);
    }
    if (!isSeq(seq) || removed.length === 0) return false;
    seq.items = items.filter((item) => !removed.includes(text(item) ?? "\0"));
    return true;
  });
  if (written) ctx.out(`unpinned: ${removed.join(", ")}\n`);
  if (missing.length) ctx.out(`not pinned: ${missing.join(", ")}\n`);
  if (!written) ctx.out("nothing changed\n");
  return 0;
}

/** `mcphub unpin`. */
export const unpinCommand: Command = {
  name: "unpin",
  summary: "Remove pins (a bare server name removes all of its pins)",
  help: UNPIN_HELP,
  run: runUnpin,
};
