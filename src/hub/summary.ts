/**
 * The capability summary of the gateway's lazy- and auto-mode instructions (one bounded line per server), and
 * the default `expose_budget`: what the `initialize` answer says of the servers, loaded before the gateway
 * answers it (start-up time: no resolver, no catalog).
 *
 * @module
 */

/** Tokens of advertised tool definitions `expose: auto` mounts whole: ~10% of a 200k-token context. */
export const DEFAULT_EXPOSE_BUDGET_TOKENS = 20_000;

/** Longest capability summary item, in UTF-8 bytes. */
export const SUMMARY_ITEM_BYTES = 256;
/** Longest capability summary, in UTF-8 bytes. */
export const SUMMARY_TOTAL_BYTES = 2048;

const utf8 = (text: string) => new TextEncoder().encode(text).length;

function clip(text: string, max: number): string {
  if (utf8(text) <= max) return text;
  let out = "";
  for (const ch of text) {
    if (utf8(out + ch + "…") > max) break;
    out += ch;
  }
  return out + "…";
}

/** One `name: hint` line per server: use_when joined by "; ", else the description, else the tags. */
export interface SummaryServer {
  name: string;
  useWhen: string[];
  description?: string;
  tags: string[];
}

/**
 * The bounded capability summary of the lazy-mode instructions: one item per
 * server (<= 256 B), <= 2048 B in all, ending `+N more; call list_servers` when cut.
 */
export function capabilitySummary(servers: readonly SummaryServer[]): string {
  const items = servers.map((s) => {
    const hint = s.useWhen.length ? s.useWhen.join("; ") : s.description ?? s.tags.join(", ");
    return clip(hint ? `- ${s.name}: ${hint}` : `- ${s.name}`, SUMMARY_ITEM_BYTES);
  });
  const lines: string[] = [];
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    const rest = items.length - i - 1;
    const more = rest > 0 ? `\n+${rest} more; call list_servers` : "";
    const candidate = used + utf8(items[i]!) + (lines.length ? 1 : 0);
    if (candidate + utf8(more) > SUMMARY_TOTAL_BYTES) {
      lines.push(`+${items.length - i} more; call list_servers`);
      break;
    }
    lines.push(items[i]!);
    used = candidate;
  }
  return lines.join("\n");
}
