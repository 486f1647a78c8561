/**
 * Known prompt-injection markers in tool metadata: hidden Unicode tag characters, runs of zero-width
 * characters, `<IMPORTANT>`-style blocks and instructions to read secrets. Flagged, never removed: the
 * agent and the user see the text as the server sent it, with the flags next to it.
 * Every pattern is linear (bounded repetition only) and the text scanned is bounded.
 *
 * @module
 */
import type { ToolDefinition } from "../catalog/mod.ts";

/** Characters of a definition's text scanned for markers. */
export const SCAN_CHARS = 64 * 1024;

/** One marker kind found in a tool's metadata. */
export type InjectionMarker =
  | "hidden_unicode_tags"
  | "zero_width_run"
  | "instruction_block"
  | "reads_secrets"
  | "overrides_instructions";

const CHECKS: { marker: InjectionMarker; pattern: RegExp }[] = [
  // U+E0000–U+E007F: invisible "tag" characters that can spell out hidden text.
  { marker: "hidden_unicode_tags", pattern: /[\u{E0000}-\u{E007F}]/u },
  // Two or more zero-width characters in a row (one alone occurs in ordinary emoji sequences).
  { marker: "zero_width_run", pattern: /[\u200B\u200C\u200D\u2060\uFEFF]{2}/u },
  {
    marker: "instruction_block",
    pattern: /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|critical)\b[^<>\n]{0,40}>/i,
  },
  {
    marker: "reads_secrets",
    pattern:
      /\b(?:read|cat|open|send|include|pass|upload|attach|print)\b[^.\n]{0,80}(?:~\/\.ssh|id_rsa|id_ed25519|\.env\b|\.aws|credentials|api[_ -]?keys?\b|secrets?\b|passwords?\b|private[_ -]?keys?\b|tokens?\b)/i,
  },
  {
    marker: "overrides_instructions",
    pattern:
      /\b(?:ignore|disregard|forget)\b[^.\n]{0,30}\b(?:previous|prior|above|earlier|all)\b[^.\n]{0,30}\binstructions\b|\b(?:do not|don't|never)\s+(?:tell|inform|mention|reveal)\b[^.\n]{0,30}\buser\b/i,
  },
];

/** The markers found in a text, in a fixed order; [] for clean text. */
export function injectionMarkers(text: string): InjectionMarker[] {
  const scanned = text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text;
  return CHECKS.filter((c) => c.pattern.test(scanned)).map((c) => c.marker);
}

/**
 * The markers in a tool's name, title, description and the strings of its schemas (walked
 * iteratively; definitions reaching here are within the depth and size limits).
 */
export function toolMarkers(def: ToolDefinition): InjectionMarker[] {
  const parts: string[] = [];
  let size = 0;
  const stack: unknown[] = [def];
  while (stack.length > 0 && size < SCAN_CHARS) {
    const value = stack.pop();
    if (typeof value === "string") {
      parts.push(value);
      size += value.length;
    } else if (value && typeof value === "object") {
      for (const item of Object.values(value)) stack.push(item);
    }
  }
  return injectionMarkers(parts.join("\n"));
}
