/**
 * Descriptions for servers added without one (`add`, `init --from`): the server's own words from its
 * `initialize` result, `serverInfo.title` or else the first sentence of its `instructions`, bounded. They are
 * written with a YAML comment, {@link DERIVED_COMMENT}, that says where they came from and that an edit
 * replaces them.
 *
 * @module
 */
import { stringify } from "yaml";
import type { CommandContext } from "./command.ts";
import { parseConfig } from "../config/mod.ts";
import { DEFAULT_RESTART_POLICY } from "../downstream/mod.ts";
import { Hub } from "../hub/mod.ts";
import { VERSION } from "./version.ts";
import { showConnectProgress } from "./progress.ts";

/** The comment beside a derived description (`description: … # derived: …`). */
export const DERIVED_COMMENT = " derived from the server's initialize result; edit to replace";

/** Longest derived description, in characters. */
export const MAX_DERIVED = 120;

/** A one-shot connection: no restarts. */
const ONE_SHOT = { ...DEFAULT_RESTART_POLICY, maxFailures: 0 };

function squash(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** The first sentence of `text` without markdown marks, or undefined. */
export function firstSentence(text: string | undefined): string | undefined {
  if (!text) return undefined;
  // The first paragraph that is not a heading.
  const paragraph = text.split(/\n\s*\n|\n(?=\s*[#*-])/).find((p) => p.trim() && !/^\s*#/.test(p));
  if (paragraph === undefined) return undefined;
  const line = paragraph.replace(/[#*_`>]+/g, "").replace(/\s+/g, " ").trim();
  const end = /[.!?](?=\s|$)/.exec(line);
  const sentence = (end ? line.slice(0, end.index) : line).trim();
  return sentence || undefined;
}

/** At most {@link MAX_DERIVED} characters, cut at a word and ending in "…" when cut. */
function bounded(text: string): string {
  const chars = [...text];
  if (chars.length <= MAX_DERIVED) return text;
  const cut = chars.slice(0, MAX_DERIVED - 1).join("");
  const space = cut.lastIndexOf(" ");
  return `${(space > MAX_DERIVED / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, "")}…`;
}

/**
 * The description a server gives itself: its `serverInfo.title` (unless that only repeats its name), else
 * the first sentence of its `instructions`; undefined when it gives neither.
 */
export function derivedDescription(
  name: string,
  info: { name?: string; title?: string } | undefined,
  instructions: string | undefined,
): string | undefined {
  const title = info?.title?.replace(/\s+/g, " ").trim();
  if (title && squash(title) !== squash(name) && squash(title) !== squash(info?.name ?? "")) {
    return bounded(title);
  }
  const sentence = firstSentence(instructions);
  return sentence === undefined ? undefined : bounded(sentence);
}

/**
 * Connects to the entries (concurrently, each bounded by connect_timeout) and returns the description each
 * that connected gives itself. Entries whose `${VAR}`s are not set are skipped; nothing is ever thrown for
 * a server that fails: it just gets no description.
 */
export async function deriveDescriptions(
  ctx: CommandContext,
  entries: readonly { name: string; entry: Record<string, unknown> }[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (!entries.length) return found;
  const servers = Object.fromEntries(entries.map(({ name, entry }) => [name, entry]));
  let config;
  try {
    config = parseConfig(stringify({ version: 1, servers }), "(new servers)", {
      env: ctx.env,
      cwd: ctx.cwd,
      serverErrors: "fail-server",
    });
  } catch {
    return found;
  }
  const usable = config.servers.filter((s) => s.enabled && s.loadError === undefined);
  if (!usable.length) return found;
  const hub = new Hub({
    config: { ...config, servers: usable, agents: [] },
    env: ctx.env.toObject(),
    version: VERSION,
    restartPolicy: ONE_SHOT,
    log: () => {},
  });
  const done = showConnectProgress(hub, ctx);
  try {
    await hub.start();
    for (const server of usable) {
      const client = hub.downstream(server.name)?.client;
      if (!client) continue;
      const text = derivedDescription(server.name, client.getServerVersion(), client.getInstructions());
      if (text !== undefined) found.set(server.name, text);
    }
  } finally {
    done();
    await hub.close();
  }
  return found;
}
