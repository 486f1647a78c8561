/**
 * The stored-result receipt: the small CallToolResult an agent gets instead of
 * a result over the response budget. Pure; the serialized receipt never
 * exceeds the budget.
 *
 * @module
 */
import { codePointFloor, utf8Length } from "./_utf8.ts";

/** The smallest non-zero response budget: a receipt always fits in it. */
export const MIN_BUDGET_BYTES = 512;

/** An MCP text content block. */
export interface TextContent {
  type: "text";
  text: string;
}

/** The structured part of a receipt. Optional fields are dropped, in order, when the budget is tight. */
export interface StoredReceipt {
  status: "stored";
  callId: string;
  server?: string;
  tool?: string;
  namespaced?: string;
  /** Serialized bytes of the original result. */
  originalBytes: number;
  budgetBytes: number;
  /** A leading slice of the original's text content, as long as the budget allows. */
  preview?: string;
  nextAction?: string;
}

/** A receipt as the CallToolResult the gateway returns. */
export interface ReceiptResult {
  content: TextContent[];
  structuredContent: StoredReceipt;
  /** Copied from the original result. */
  isError?: boolean;
  [key: string]: unknown;
}

/** The original result, as far as the receipt reads it. */
export interface ResultLike {
  content?: unknown[];
  isError?: boolean;
  [key: string]: unknown;
}

/** The input of {@linkcode buildReceipt}. */
export interface ReceiptInput {
  result: ResultLike;
  /** Serialized bytes of `result` (what was stored). */
  originalBytes: number;
  callId: string;
  server: string;
  /** The downstream tool name. */
  tool: string;
  namespaced: string;
  /** The response budget in bytes, at least {@linkcode MIN_BUDGET_BYTES}. */
  budget: number;
}

const NEXT_ACTION =
  "Call get_result with this callId and cursor 0, then continue with each nextCursor until done is true.";

interface Level {
  names: boolean;
  nextAction: boolean;
  sentence: (input: ReceiptInput) => string;
}

function fullSentence(input: ReceiptInput): string {
  return `Result stored: ${input.originalBytes} bytes exceeded the ${input.budget}-byte response budget. ` +
    `Retrieve it with get_result using callId ${input.callId} and cursor 0.`;
}

function shortSentence(input: ReceiptInput): string {
  return `Stored; use get_result with callId ${input.callId}, cursor 0.`;
}

// Most helpful first; the last level fits any budget >= MIN_BUDGET_BYTES whatever the names are.
const LEVELS: Level[] = [
  { names: true, nextAction: true, sentence: fullSentence },
  { names: true, nextAction: false, sentence: fullSentence },
  { names: false, nextAction: false, sentence: fullSentence },
  { names: false, nextAction: false, sentence: shortSentence },
];

function assemble(input: ReceiptInput, level: Level, preview: string | undefined): ReceiptResult {
  const structured: StoredReceipt = {
    status: "stored",
    callId: input.callId,
    ...(level.names ? { server: input.server, tool: input.tool, namespaced: input.namespaced } : {}),
    originalBytes: input.originalBytes,
    budgetBytes: input.budget,
    ...(preview ? { preview } : {}),
    ...(level.nextAction ? { nextAction: NEXT_ACTION } : {}),
  };
  const receipt: ReceiptResult = {
    content: [{ type: "text", text: level.sentence(input) }],
    structuredContent: structured,
  };
  if (typeof input.result.isError === "boolean") receipt.isError = input.result.isError;
  return receipt;
}

/** The serialized size of `value` in UTF-8 bytes, as the budget counts it. */
export function serializedBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value));
}

/**
 * The text of the result's `text` blocks joined with "\n", read no further
 * than `maxUnits` UTF-16 units (a preview can never be longer than the budget).
 */
export function leadingText(result: ResultLike, maxUnits: number): string | undefined {
  if (!Array.isArray(result.content)) return undefined;
  const parts: string[] = [];
  let length = 0;
  for (const block of result.content) {
    if (length >= maxUnits) break;
    if (typeof block !== "object" || block === null) continue;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (type !== "text" || typeof text !== "string") continue;
    if (parts.length > 0) {
      parts.push("\n");
      length++;
    }
    const room = Math.max(0, maxUnits - length);
    const piece = text.length > room ? text.slice(0, codePointFloor(text, room)) : text;
    parts.push(piece);
    length += piece.length;
    if (piece !== text) break;
  }
  return parts.length > 0 ? parts.join("") : undefined;
}

function jsonCharCost(unit: number): number {
  if (unit === 0x22 || unit === 0x5c) return 2;
  if (unit < 0x20) return unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6;
  if (unit < 0x80) return 1;
  if (unit < 0x800) return 2;
  return 3;
}

/**
 * The longest prefix of `text`, on a code point boundary, whose JSON string
 * form (without quotes) takes at most `room` UTF-8 bytes.
 */
function fittingPrefix(text: string, room: number): string {
  let cost = 0;
  let end = 0;
  while (end < text.length) {
    const unit = text.charCodeAt(end);
    let units = 1;
    let add: number;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(end + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        units = 2;
        add = 4;
      } else add = 6; // a lone surrogate is escaped as \udxxx
    } else if (unit >= 0xdc00 && unit <= 0xdfff) add = 6;
    else add = jsonCharCost(unit);
    if (cost + add > room) break;
    cost += add;
    end += units;
  }
  return text.slice(0, end);
}

/**
 * Builds the receipt for a result that was stored under `callId`. Keeps the
 * most helpful fields that fit (names and nextAction go first when the budget
 * is tight; callId always stays), then adds the longest text preview that
 * still fits. `JSON.stringify(receipt)` is at most `budget` UTF-8 bytes.
 *
 * @throws {RangeError} when `budget` is below {@linkcode MIN_BUDGET_BYTES} (0 means unlimited: nothing to store)
 */
export function buildReceipt(input: ReceiptInput): ReceiptResult {
  const { budget } = input;
  if (!Number.isSafeInteger(budget) || budget < MIN_BUDGET_BYTES) {
    throw new RangeError(
      `Cannot build a receipt for a ${budget}-byte budget: the budget must be at least ${MIN_BUDGET_BYTES} bytes`,
    );
  }
  let chosen = LEVELS[LEVELS.length - 1];
  for (const level of LEVELS) {
    if (serializedBytes(assemble(input, level, undefined)) <= budget) {
      chosen = level;
      break;
    }
  }
  const bare = assemble(input, chosen, undefined);
  const bareBytes = serializedBytes(bare);
  const text = leadingText(input.result, budget);
  // `"preview":"…",` costs 13 bytes plus the escaped text.
  const room = budget - bareBytes - 13;
  if (text && room > 0) {
    let preview = fittingPrefix(text, room);
    let receipt = assemble(input, chosen, preview);
    // fittingPrefix counts exactly; this loop only guards against a miscount.
    while (preview && serializedBytes(receipt) > budget) {
      preview = fittingPrefix(preview, utf8Length(JSON.stringify(preview)) - 2 - 1);
      receipt = assemble(input, chosen, preview);
    }
    if (preview) return receipt;
  }
  if (bareBytes > budget) {
    throw new RangeError(`Cannot fit a receipt in ${budget} bytes: originalBytes or callId is malformed`);
  }
  return bare;
}
