/**
 * Limits on what a downstream server may hand the gateway: how deep and how large one tool definition
 * may be. Checked iteratively (no recursion, no JSON.stringify) before anything else reads a definition,
 * so a hostile definition is rejected instead of overflowing the stack of every later step (catalog
 * revision, tools/list, the tool cache).
 *
 * @module
 */
import { drain, type ToolDefinition } from "../catalog/mod.ts";

/** Deepest nesting of objects and arrays in one tool definition (the definition itself is level 1). */
export const MAX_DEFINITION_DEPTH = 64;
/** Largest tool definition, in bytes of its JSON text (counted without serialising it). */
export const MAX_DEFINITION_BYTES = 512 * 1024;
/** Longest tool name, in characters. */
export const MAX_TOOL_NAME_CHARS = 256;
/** Characters of a rejected tool's name shown in `list_servers`. */
export const SHOWN_NAME_CHARS = 128;

/** The reasons a definition is not mounted (tests pin them). */
export const NOT_AN_OBJECT = "the definition is not an object";
/** See {@link NOT_AN_OBJECT}. */
export const NAME_NOT_A_STRING = "its name is not a non-empty string";
/** See {@link NOT_AN_OBJECT}. */
export const TOO_DEEP =
  `it nests deeper than ${MAX_DEFINITION_DEPTH} levels (the limit of a tool definition)`;
/** See {@link NOT_AN_OBJECT}. */
export const TOO_LARGE = `it is larger than ${MAX_DEFINITION_BYTES} bytes (the limit of a tool definition)`;
/** See {@link NOT_AN_OBJECT}. */
export function nameTooLong(chars: number): string {
  return `its name is ${chars} characters long (limit ${MAX_TOOL_NAME_CHARS})`;
}

/**
 * A listed tool judged over the limits from its bytes and never parsed (see definition_scan.ts): it
 * takes the definition's place in the list, and {@linkcode screenTools} lists it as rejected.
 */
export class UnparsedDefinition {
  /**
   * @param name the definition's name when it is a string, cut to more than {@link SHOWN_NAME_CHARS}
   * characters when longer (what `list_servers` shows of it is cut from this as from the whole)
   * @param problem why it is not mounted, in the words of {@linkcode definitionProblem}
   */
  constructor(readonly name: string | undefined, readonly problem: string) {}
}

/** A tool the gateway did not mount, and why. */
export interface RejectedTool {
  name: string;
  reason: string;
}

/**
 * Why a definition cannot be mounted, or undefined when it is within the limits. Walks the value with
 * an explicit stack, stopping at the first level past {@link MAX_DEFINITION_DEPTH} or the first byte past
 * {@link MAX_DEFINITION_BYTES}: the work is bounded by the limits, not by what the server sent.
 */
export function definitionProblem(def: unknown): string | undefined {
  if (def instanceof UnparsedDefinition) return def.problem;
  if (def === null || typeof def !== "object" || Array.isArray(def)) return NOT_AN_OBJECT;
  const name = (def as { name?: unknown }).name;
  if (typeof name !== "string" || name === "") return NAME_NOT_A_STRING;
  if (name.length > MAX_TOOL_NAME_CHARS) return nameTooLong(name.length);
  const stack: { value: unknown; depth: number }[] = [{ value: def, depth: 1 }];
  let bytes = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === "string") bytes += value.length + 2;
    else if (value === null || typeof value !== "object") bytes += 8;
    else {
      if (depth > MAX_DEFINITION_DEPTH) return TOO_DEEP;
      bytes += 2;
      if (Array.isArray(value)) {
        for (const item of value) {
          bytes += 1;
          stack.push({ value: item, depth: depth + 1 });
        }
      } else {
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          bytes += key.length + 4;
          stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1 });
        }
      }
    }
    if (bytes > MAX_DEFINITION_BYTES) return TOO_LARGE;
  }
  return undefined;
}

/** Splits a listed tool array into definitions within the limits and rejected ones. */
export function screenTools(
  tools: readonly unknown[],
): { accepted: ToolDefinition[]; rejected: RejectedTool[] } {
  return drain(screenToolsSteps(tools));
}

/** Tools screened between two yields of {@linkcode screenToolsSteps} (each is bounded by the limits). */
const SCREEN_STEP = 256;

/**
 * {@linkcode screenTools} stepwise: yields every {@link SCREEN_STEP} tools, so a 100,000-tool list (~0.2 s
 * of walking) is screened in slices (see slices.ts).
 */
export function* screenToolsSteps(
  tools: readonly unknown[],
): Generator<void, { accepted: ToolDefinition[]; rejected: RejectedTool[] }> {
  const accepted: ToolDefinition[] = [];
  const rejected: RejectedTool[] = [];
  for (let i = 0; i < tools.length; i++) {
    if (i % SCREEN_STEP === SCREEN_STEP - 1) yield;
    const def = tools[i];
    const problem = definitionProblem(def);
    if (problem === undefined) {
      accepted.push(def as ToolDefinition);
      continue;
    }
    const raw = def && typeof def === "object" ? (def as { name?: unknown }).name : undefined;
    const name = typeof raw === "string" && raw !== ""
      ? raw.length > SHOWN_NAME_CHARS ? `${raw.slice(0, SHOWN_NAME_CHARS)}…` : raw
      : `(tool #${i + 1} of the list)`;
    rejected.push({ name, reason: `not mounted: ${problem}` });
  }
  return { accepted, rejected };
}
