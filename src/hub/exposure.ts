/**
 * Which downstream tools a session mounts: every one (`expose: all`), the pinned ones (`lazy`), or, with
 * `expose: auto`, every one while their advertised definitions fit a token budget and past it the pinned
 * tools and the most-used ones that fit, the rest reached through the meta-tools. Pure: the caller gives
 * the catalog, each definition's advertised size and the usage counts.
 *
 * @module
 */
import type { CatalogTool } from "../catalog/mod.ts";
import { pinnedTools } from "./discovery.ts";

import { DEFAULT_EXPOSE_BUDGET_TOKENS } from "./summary.ts";

export { DEFAULT_EXPOSE_BUDGET_TOKENS };
/** Bytes per token in the estimate (as the stats' token estimates). */
export const BYTES_PER_TOKEN = 4;

/** The exposure in force for one session, and why. */
export interface Exposure {
  /** The configured mode. */
  expose: "all" | "lazy" | "auto";
  /** What is in force: every tool mounted, or the meta-tools plus a chosen few. */
  mode: "all" | "lazy";
  /** The mounted downstream tools, in catalog order. */
  tools: CatalogTool[];
  /** Why, in one sentence for the agent and the operator. */
  reason: string;
  /** Estimated tokens of every tool definition (auto only; undefined when they were not all measured). */
  allTokens?: number;
  /** The budget in tokens (auto only). */
  budgetTokens?: number;
}

/** What {@linkcode decideExposure} needs besides the catalog. */
export interface ExposureOptions {
  expose: "all" | "lazy" | "auto";
  pins: readonly string[];
  /** Tokens for `auto`. @default DEFAULT_EXPOSE_BUDGET_TOKENS */
  budgetTokens?: number;
  /** UTF-8 bytes of a tool's advertised definition. */
  bytes(entry: CatalogTool): number;
  /** UTF-8 bytes of the meta-tools' definitions (always advertised). */
  metaBytes: number;
  /** Calls per public name (from the call records); a tool absent has none. */
  usage: ReadonlyMap<string, number>;
}

const tokens = (bytes: number) => Math.ceil(bytes / BYTES_PER_TOKEN);

/** Decides the mounted tools for `options.expose` (see the module's note). */
export function decideExposure(catalog: readonly CatalogTool[], options: ExposureOptions): Exposure {
  const { expose, pins } = options;
  if (expose === "all") {
    return { expose, mode: "all", tools: [...catalog], reason: "expose: all mounts every tool" };
  }
  if (expose === "lazy") {
    return {
      expose,
      mode: "lazy",
      tools: pinnedTools(catalog, pins),
      reason: "expose: lazy mounts only the pinned tools; the meta-tools reach the rest",
    };
  }
  const budgetTokens = options.budgetTokens ?? DEFAULT_EXPOSE_BUDGET_TOKENS;
  const budget = budgetTokens * BYTES_PER_TOKEN;
  // Every definition measured until the budget is passed (a large catalog stops early).
  let used = options.metaBytes;
  let all = true;
  for (const entry of catalog) {
    used += options.bytes(entry);
    if (used > budget) {
      all = false;
      break;
    }
  }
  const n = catalog.length;
  if (all) {
    return {
      expose,
      mode: "all",
      tools: [...catalog],
      reason: `expose: auto mounts every tool: the ${n} tool definition${n === 1 ? "" : "s"} (~${
        tokens(used)
      } tokens with the meta-tools) fit expose_budget (${budgetTokens} tokens)`,
      allTokens: tokens(used),
      budgetTokens,
    };
  }
  // Past the budget: the pinned tools always, then the most-used that still fit, most calls first.
  const pinned = pinnedTools(catalog, pins);
  const chosen = new Set(pinned);
  let size = options.metaBytes;
  for (const entry of pinned) size += options.bytes(entry);
  const used_ = catalog.filter((t) => !chosen.has(t) && (options.usage.get(t.namespaced) ?? 0) > 0)
    .sort((a, b) =>
      (options.usage.get(b.namespaced)! - options.usage.get(a.namespaced)!) ||
      (a.namespaced < b.namespaced ? -1 : a.namespaced > b.namespaced ? 1 : 0)
    );
  let mostUsed = 0;
  for (const entry of used_) {
    const bytes = options.bytes(entry);
    if (size + bytes > budget) continue;
    size += bytes;
    chosen.add(entry);
    mostUsed++;
  }
  return {
    expose,
    mode: "lazy",
    tools: catalog.filter((t) => chosen.has(t)),
    reason: `expose: auto hides most tools: the ${n} tool definitions pass expose_budget (${budgetTokens} ` +
      `tokens), so ${pinned.length} pinned and ${mostUsed} most-used tool${
        mostUsed === 1 ? " is" : "s are"
      } mounted (~${
        tokens(size)
      } tokens with the meta-tools); resolve_tool and search_tools find the rest, ` +
      "call_tool runs them",
    budgetTokens,
  };
}
