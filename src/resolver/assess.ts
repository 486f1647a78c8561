/**
 * Route assessment for resolve: turns a ranking into confident, ambiguous or
 * no_match with the evidence behind the call. Weak term coverage and close
 * scores stay ambiguous; a positive lexical hit alone is not a route.
 *
 * @module
 */
import type { RankedQuery } from "./rank.ts";

/** Outcome of routing a query. */
export type RouteStatus = "confident" | "ambiguous" | "no_match";

/** How sure the route is. */
export type Confidence = "high" | "medium" | "low" | "none";

/** Why the assessment came out as it did; stable strings a harness may branch on. */
export type ReasonCode =
  | "empty_query"
  | "no_terms_matched"
  | "exact_name_match"
  | "strong_name_match"
  | "name_match"
  | "field_match"
  | "description_only_match"
  | "full_term_coverage"
  | "high_term_coverage"
  | "partial_term_coverage"
  | "low_term_coverage"
  | "single_candidate"
  | "clear_lead"
  | "close_scores"
  | "multi_step_query"
  | "weak_tool_evidence"
  | "action_not_offered";

/** A route decision with its evidence. */
export interface RouteAssessment {
  status: RouteStatus;
  confidence: Confidence;
  reasonCodes: ReasonCode[];
  /** Fraction of the query words the top hit matched (0 when there is none). */
  matchedFraction: number;
  /** (top1 - top2) / top1; 1 with a single candidate, 0 with none. */
  scoreGap: number;
  /** What to do next, in one sentence. */
  hint: string;
}

/** Thresholds of {@link assess}. */
export const ASSESS_THRESHOLDS = {
  /** IDF-weighted coverage below which a match only in descriptions counts as nothing. */
  incidentalCoverage: 0.5,
  /** Coverage (within the best clause) below which the top hit explains too little of the request. */
  minimumCoverage: 1 / 3,
  /** Coverage for a confident route. */
  confidentCoverage: 0.6,
  /** Coverage for a high-confidence route. */
  highCoverage: 0.75,
  /** Relative gap below which the top two are too close to call. */
  closeGap: 0.15,
  /** Relative gap for a high-confidence route. */
  clearGap: 0.25,
} as const;

/** Hints by status. */
export const HINTS: Readonly<Record<RouteStatus, string>> = {
  confident:
    "Call call_tool with this server and tool, filling the argument template; call describe_tool first if a field is unclear",
  ambiguous:
    "Several tools fit or the match is partial: compare the alternatives, resolve each step of a multi-step task separately, or browse with search_tools",
  no_match:
    "No tool matched: try other words for the capability, add a use_when hint to the server in mcphub.yaml, or browse with search_tools",
};

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/**
 * Assesses a ranking for resolve:
 * - no_match when nothing matched, when the top hit matched only incidental
 *   description words, or when it explains less than a third of the request
 *   (within its best clause);
 * - ambiguous when coverage is partial, the runner-up is close, the match is
 *   not in a name/title/hint/tag field, the tool's own name, title and hints
 *   carry too little of the request, or the request has several steps the top
 *   hit does not all cover;
 * - confident otherwise; high with near-full coverage, a clear lead and the
 *   tool's name in the query.
 */
export function assess(ranked: RankedQuery): RouteAssessment {
  const t = ASSESS_THRESHOLDS;
  const noMatch = (reasonCodes: ReasonCode[], matchedFraction = 0, scoreGap = 0): RouteAssessment => ({
    status: "no_match",
    confidence: "none",
    reasonCodes,
    matchedFraction,
    scoreGap,
    hint: HINTS.no_match,
  });
  const top = ranked.hits[0];
  const q = ranked.query;
  // A request that is all locator ("what's in src/utils?") has no words of its own: a tool doing what it asks
  // on that path answers it.
  if (ranked.query.words.length === 0 && !top?.located) return noMatch(["empty_query"]);
  if (!top || top.score <= 0) return noMatch(["no_terms_matched"]);
  // A file the request acts on, in a catalog where no tool performs that action on a file: whatever the first
  // tool matched ("delete build/old.log" and a memory's `delete_entities`), it cannot do it.
  if (ranked.noFileTool && !top.exactName) return noMatch(["action_not_offered"]);
  // A tool matching no word of the request, there only because it performs the action asked for, with nothing
  // named for that action to act on (no name, number, locator or stated value): "write me a haiku about autumn".
  if (
    top.coverage === 0 && top.clauseCoverage === 0 && !top.located && !top.keepsStatement &&
    !top.actionAndObject &&
    !q.argumentLike.includes(true) && !(q.stated ?? []).includes(true) && q.locators === undefined
  ) return noMatch(["low_term_coverage"]);
  const runnerUp = ranked.runnerUpScore;
  const gap = runnerUp !== undefined ? Math.max(0, (top.score - runnerUp) / top.score) : 1;
  const matchedFraction = round(top.coverage);
  const scoreGap = round(gap);
  // A tool doing the action asked for on the object its name names answers the request, however few of the
  // request's other words it matches: at most ambiguous, never no_match ("spin up a dev branch …").
  // So does the request naming the tool's server and the object of the tool's name, asking no other action.
  // And a tool whose name's object the request names, matching two or more of its words in a name, title or hint
  // field, with no other action asked ("cancel subscripton sub_1Abc" and `cancel_subscription`).
  const verbAndObject = top.actionAndObject || top.serverAndObject ||
    (top.strongField && top.halfObject && top.matchedTerms.length >= 2) || top.actionOnMatch ||
    top.keepsStatement;
  // A long request is mostly story; the clause that asks is what the tool must answer. A tool covering one
  // clause as a confident route would (two or more of its words) is more than an incidental match, however
  // little of the story it matches ("… our invoice is due. Spin up a fresh ubuntu box in fra1, named …").
  const clauseAnswered = ranked.clauses > 1 && top.clauseCoverage >= t.confidentCoverage &&
    top.clauseHits >= 2;
  // A tool doing the action asked for, by its name or lead sentence, is more than an incidental match.
  // A name of one generic verb (`recipe__get`) met by that verb ("how much sleep did I get?") is no field match.
  const incidental = !(top.strongField && !top.genericName) && !top.actionAgrees && !top.located &&
    top.weightedCoverage < t.incidentalCoverage;
  if (incidental && !verbAndObject && !clauseAnswered) {
    return noMatch(["description_only_match", "low_term_coverage"], matchedFraction, scoreGap);
  }
  const coverage = Math.max(top.coverage, top.clauseCoverage);
  // A tool named in full (two or more name words, all in the query) is evidence even in a long request.
  const namedInFull = top.nameCoverage >= 0.999 && top.nameWords >= 2;
  // The action verb met by the tool's own action counts here: an answerable request is not "no match".
  // So does a tool doing the action asked for on the file or web address the request names.
  const lowCoverage = Math.max(coverage, top.answerableCoverage) < t.minimumCoverage && !namedInFull &&
    !top.located;
  if (lowCoverage && !verbAndObject) return noMatch(["low_term_coverage"], matchedFraction, scoreGap);
  // Kept only by its verb and object, the route stays open: the agent compares the alternatives.
  const rescued = (verbAndObject || clauseAnswered) && (lowCoverage || incidental);
  const reasons: ReasonCode[] = [];
  if (top.exactName) reasons.push("exact_name_match");
  else if (top.nameCoverage >= 0.999) reasons.push("strong_name_match");
  else if (top.nameCoverage > 0) reasons.push("name_match");
  else if (top.strongField) reasons.push("field_match");
  else reasons.push("description_only_match");
  if (top.coverage >= 0.999) reasons.push("full_term_coverage");
  else if (top.coverage >= t.highCoverage) reasons.push("high_term_coverage");
  else if (top.coverage >= t.confidentCoverage) reasons.push("partial_term_coverage");
  else reasons.push("low_term_coverage");
  const multiStep = ranked.clauses > 1 && top.coverage < t.confidentCoverage;
  if (multiStep) reasons.push("multi_step_query");
  if (runnerUp === undefined) reasons.push("single_candidate");
  else if (gap < t.closeGap) reasons.push("close_scores");
  else if (gap >= t.clearGap) reasons.push("clear_lead");
  const close = runnerUp !== undefined && gap < t.closeGap;
  // A name of one generic verb (`git__show`) matched by "show" says nothing of what is shown.
  const nameEvidence = top.exactName || (top.nameCoverage >= 0.999 && !top.genericName);
  let status: RouteStatus;
  let confidence: Confidence;
  // The route must be about this tool, not its server: its name, title or hints carry the request.
  // A name word the request uses only inside a name it gives ("my Stats 101 notebook") is no such evidence.
  const ownEvidence = top.exactName || (top.ownNameCoverage >= 0.5 && !top.genericName) ||
    top.toolFieldCoverage >= 0.5;
  if (!ownEvidence) reasons.push("weak_tool_evidence");
  // Confident needs a clear lead unless the tool is named in full: a partial name a little ahead of the
  // next tool is as often the wrong one of a family (`create_table` for "what tables are…").
  const unclear = gap < t.clearGap && !nameEvidence;
  // The request's object must be this tool's: a word naming another tool's object, unmatched, leaves it open.
  if (top.missedObject && ownEvidence) reasons.push("weak_tool_evidence");
  // …and its action: a tool doing another action than the one asked for is not a confident answer.
  // …and its party: a tool acting only for the caller does not answer for someone the request names.
  if (top.otherParty && !reasons.includes("weak_tool_evidence")) reasons.push("weak_tool_evidence");
  const objectOpen = (top.missedObject || top.actionConflict || top.otherParty) && !top.exactName;
  if (
    rescued || top.coverage < t.confidentCoverage || close || !top.strongField || !ownEvidence || unclear ||
    objectOpen
  ) {
    status = "ambiguous";
    confidence = coverage >= t.confidentCoverage && top.strongField ? "medium" : "low";
  } else if (top.coverage >= t.highCoverage && (gap >= t.clearGap || top.exactName) && nameEvidence) {
    status = "confident";
    confidence = "high";
  } else {
    status = "confident";
    confidence = "medium";
  }
  return { status, confidence, reasonCodes: reasons, matchedFraction, scoreGap, hint: HINTS[status] };
}
