/**
 * The one tools/list screen, for every transport: the `tools/list` requests a connection sent whose
 * answers are awaited, and each such answer read from its bytes — every tool over the depth or size limit
 * judged and replaced by its stand-in, unparsed, and big members the gateway does not read left out (see
 * definition_scan.ts). The stdio client end and the HTTP downstreams' `fetch` both screen through it.
 *
 * @module
 */
import { type Member, member, RawBytes, type Scanned, utf8 } from "../json/raw_json.ts";
import { Stepper } from "../json/slices.ts";
import {
  type Replacement,
  replaceSpans,
  type StandIn,
  standInSteps,
  unreadMembers,
} from "./definition_scan.ts";

/** A `tools/list` answer is read down to its tools (each one's bytes), in the same pass. */
export const TOOLS_PATH: readonly string[] = ["result", "tools"];
/** `tools/list` requests whose answers are awaited, per connection (the last ones sent). */
export const LIST_IDS = 16;

const NULL_BYTES = utf8("null");

type Id = string | number;

/** What the screen reads of an awaited `tools/list` answer's scan. */
export interface ListAnswer {
  id: Id;
  tools: Member;
  top: readonly Member[];
  result: readonly Member[];
}

/** The awaited `tools/list` answers of one connection, and the screen of their bytes. */
export class ListScreen {
  /** Ids of the `tools/list` requests sent whose answers have not come (the last {@link LIST_IDS}). */
  #ids: Id[] = [];

  /** Whether any `tools/list` answer is awaited (lines are then scanned for one). */
  get awaiting(): boolean {
    return this.#ids.length > 0;
  }

  /** Notes a `tools/list` request sent with `id`. */
  sent(id: Id): void {
    this.#ids.push(id);
    if (this.#ids.length > LIST_IDS) this.#ids.shift();
  }

  /** Notes that the answer to `id` was delivered another way (parsed whole): it is no longer awaited. */
  answered(id: Id): void {
    const k = this.#ids.indexOf(id);
    if (k >= 0) this.#ids.splice(k, 1);
  }

  /**
   * When `raw` (whose scan, made as it arrived, is `top`) answers an awaited `tools/list` — that request is
   * then no longer awaited — its id, `tools` member and the members of the answer and of its result; else
   * undefined.
   */
  answer(raw: RawBytes, top: Scanned | null | undefined = raw.scanned): ListAnswer | undefined {
    if (!top || top.kind !== "object") return undefined;
    const idMember = member(top.members, "id");
    if (!idMember || idMember.end - idMember.start > 64) return undefined;
    let id: unknown;
    try {
      id = raw.json(idMember.start, idMember.end);
    } catch {
      return undefined;
    }
    const k = this.#ids.indexOf(id as Id);
    // A response (a request of the server's own may carry the same id: a different space).
    const result = member(top.members, "result")?.children;
    if (k < 0 || !result || member(top.members, "method")) return undefined;
    this.#ids.splice(k, 1);
    if (result.kind !== "object") return undefined;
    const tools = member(result.members, "tools");
    if (!tools || raw.at(tools.start) !== 0x5b) return undefined;
    return { id: id as Id, tools, top: top.members, result: result.members };
  }

  /**
   * The answer's bytes with each over-limit tool as `null` and big unread members left out, judged in slices
   * that yield to the event loop, with the stand-ins to put back once parsed (`putStandIns`).
   */
  async screen(raw: RawBytes, answer: ListAnswer): Promise<{ bytes: RawBytes; standIns: StandIn[] }> {
    const standIns = await new Stepper(standInSteps(raw, answer.tools)).finishAsync();
    const replaced: Replacement[] = unreadMembers(raw, answer.top, answer.result);
    for (const { span } of standIns) replaced.push({ span, bytes: NULL_BYTES });
    return { bytes: replaced.length ? replaceSpans(raw, replaced) : raw, standIns };
  }
}
