/**
 * A small intent vocabulary for tool routing. Query words expand to related
 * index terms at a lower weight; the original word always stays, so a
 * synonym can add recall but never replace an exact match.
 *
 * @module
 */
import { stem } from "./tokenize.ts";

/** Weight of a related word relative to the query word it came from. */
export const SYNONYM_WEIGHT = 0.4;

/** Weight of an equivalent spelling (abbreviation, file extension, product name of the format). */
export const EQUIVALENT_WEIGHT = 0.85;

/** Spellings of the same thing: every member expands to every other member at {@link EQUIVALENT_WEIGHT}. */
const EQUIVALENTS: readonly string[] = [
  "folder directory dir",
  "repository repo",
  "database db",
  "document doc",
  "presentation ppt pptx powerpoint",
  "spreadsheet xlsx xls excel workbook",
  "image img picture pic photo",
  "markdown md",
  "summarize summarise summary tldr",
  "calculate calculator calc",
  "cryptocurrency crypto",
  "bitcoin btc",
  "ethereum eth",
  "youtube yt",
  "javascript js",
  "typescript ts",
  "python py",
  "kubernetes k8s",
  "configuration config",
  "environment env",
  "message msg",
  "information info",
  "application app",
  "statistics stats",
  "temperature temp",
];

/** Related words: every member expands to every other member at {@link SYNONYM_WEIGHT}. */
const GROUPS: readonly string[] = [
  "search find lookup locate",
  "delete remove erase",
  "edit modify update change alter",
  "run execute exec launch invoke",
  "chart graph plot diagram",
  "presentation slide slideshow deck",
  "spreadsheet sheet",
  "weather forecast",
  "time clock timezone date",
  "stock ticker equity",
  "crypto bitcoin ethereum",
  "email mail inbox",
  "calendar schedule appointment",
  "translate translation",
  "paper arxiv preprint publication",
  "video youtube",
  "remember memory",
  "task todo",
  "calculate compute arithmetic estimate",
  "random dice",
  "audio music song sound",
  "package npm pypi dependency library",
  "browser playwright puppeteer",
  "screenshot capture",
  "convert conversion transform",
  "trend trending popular",
  "news headline",
];

/**
 * Directed intents: a word on the left also searches for the words on the
 * right (`fetch` looks for `web` tools, not the other way round).
 */
const INTENTS: readonly [string, string][] = [
  ["fetch download url http https webpage website site internet online", "web"],
  ["sql table postgres postgresql mysql sqlite", "database"],
  ["query", "database search"],
  ["git commit branch", "repository"],
  ["file folder directory path", "file"],
  ["save store", "write"],
  ["open view load", "read"],
  ["show display enumerate", "list"],
  ["docx", "document word"],
  ["make generate build draft compose", "create"],
  ["address geocode coordinates latitude longitude nearby", "location map"],
  ["route directions navigation", "route map"],
  ["meeting event", "calendar"],
  ["price prices quote", "price market"],
  ["shell terminal bash command", "command execute"],
  ["notes", "note memory"],
  ["pdf", "document"],
  ["wiki", "wikipedia"],
  [
    "today tomorrow yesterday tonight weekend monday tuesday wednesday thursday friday saturday sunday",
    "date time current",
  ],
];

function stems(words: string): string[] {
  return words.split(/\s+/).filter(Boolean).map(stem);
}

/** A related term and its weight. */
export interface Synonym {
  term: string;
  weight: number;
}

function build(): Map<string, Synonym[]> {
  const map = new Map<string, Map<string, number>>();
  const add = (from: string, to: string, weight: number) => {
    if (from === to) return;
    let m = map.get(from);
    if (!m) map.set(from, m = new Map());
    m.set(to, Math.max(m.get(to) ?? 0, weight));
  };
  for (const group of EQUIVALENTS) {
    const members = stems(group);
    for (const a of members) for (const b of members) add(a, b, EQUIVALENT_WEIGHT);
  }
  for (const group of GROUPS) {
    const members = stems(group);
    for (const a of members) for (const b of members) add(a, b, SYNONYM_WEIGHT);
  }
  for (const [left, right] of INTENTS) {
    for (const a of stems(left)) for (const b of stems(right)) add(a, b, SYNONYM_WEIGHT);
  }
  return new Map([...map].map(([k, v]) => [k, [...v].map(([term, weight]) => ({ term, weight }))]));
}

const SYNONYMS: ReadonlyMap<string, readonly Synonym[]> = build();

/** Terms related to a stemmed query term, with their relative weights (empty when none). */
export function synonymsOf(term: string): readonly Synonym[] {
  return SYNONYMS.get(term) ?? [];
}
