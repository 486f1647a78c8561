/**
 * One line of newline-delimited JSON-RPC read as a message: parsed (in slices when huge) and checked
 * against the SDK's envelope schema, or refused as a {@linkcode ProtocolViolation}.
 *
 * @module
 */
import { JSONRPCMessageSchema } from "./sdk.ts";
import type { JSONRPCMessage } from "./sdk.ts";
import { parseJson } from "../json/mod.ts";
import { decodeLine, lineDecoder } from "../json/lines.ts";
import type { RawBytes } from "../json/raw_json.ts";
import { leadSteps, parseSteps, slicedParseApplies } from "../json/sliced_json.ts";
import { Stepper } from "../json/slices.ts";
/** A line that is not a JSON-RPC message. */
export class ProtocolViolation extends Error {
  override name = "ProtocolViolation";
  constructor(message: string, readonly line: string, options?: ErrorOptions) {
    super(message, options);
  }
}

export function parseLine(line: string): JSONRPCMessage {
  return validateMessage(parseLineJson(line), line);
}

export function parseLineJson(line: string): unknown {
  try {
    return parseJson(line);
  } catch (error) {
    throw new ProtocolViolation("Not JSON", line, { cause: error });
  }
}

/** Characters of a huge line kept in its {@linkcode ProtocolViolation} (it is quoted cut to far fewer). */
const VIOLATION_LINE_BYTES = 64 * 1024;

/**
 * A huge line (see sliced_json.ts) parsed in slices that yield to the event loop: the same message as
 * {@linkcode parseLine} gives, or the same ProtocolViolation ("Not JSON", "Not a JSON-RPC 2.0 message"),
 * whose `line` is then the line's first {@linkcode VIOLATION_LINE_BYTES} bytes. The envelope's check is
 * the SDK's schema, which reads the top of the message only (a `result` is a loose object): ~1 ms.
 */
async function parseLineSliced(raw: RawBytes, lead: number): Promise<JSONRPCMessage> {
  const head = () => lineDecoder.decode(raw.bytes(0, Math.min(raw.length, VIOLATION_LINE_BYTES)));
  let value: unknown;
  try {
    value = await new Stepper(parseSteps(raw, lead)).finishAsync();
  } catch (error) {
    throw new ProtocolViolation("Not JSON", head(), { cause: error });
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolViolation("Not a JSON-RPC 2.0 message", head());
  return parsed.data;
}

/** A line parsed whole, or in slices when huge (see sliced_json.ts); undefined for a blank line. */
export async function parseRaw(raw: RawBytes): Promise<JSONRPCMessage | undefined> {
  if (slicedParseApplies(raw)) {
    const lead = await new Stepper(leadSteps(raw)).finishAsync();
    if (lead >= 0 && (raw.at(lead) === 0x7b || raw.at(lead) === 0x5b)) {
      return await parseLineSliced(raw, lead);
    }
  }
  const line = decodeLine(raw);
  return line.trim() === "" ? undefined : parseLine(line);
}

export function validateMessage(value: unknown, line: string): JSONRPCMessage {
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolViolation("Not a JSON-RPC 2.0 message", line);
  return parsed.data;
}
