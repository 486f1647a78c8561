/**
 * Pin verdicts per server: each server's listed tools checked against the pin store once per list (in
 * slices, shared by the catalog build and a direct ask), which tools are mounted and which held, and a
 * watch that re-reads the held tools' pins every 2 s so an approval made in another process (or on another
 * replica) mounts them.
 *
 * @module
 */
import { type PackedTool, packTool, type ToolDefinition, unpackTool } from "../catalog/mod.ts";
import { Stepper } from "../json/slices.ts";
import { messageOf } from "../mcp/errors.ts";
import { heldMessage, type HeldTool, PIN_CHUNK, type PinStore, type Trust } from "./pinning.ts";

/** A `PinVerdict` (pinning.ts) over packed tools: the mounted ones are the packed tools checked. */
export interface PackedVerdict {
  mounted: PackedTool[];
  held: HeldTool[];
}

/** What a verdict reads of one server: its name, its current tools and its `trust:`. */
export interface VerdictServer {
  readonly name: string;
  readonly tools: readonly PackedTool[];
  readonly config: { readonly trust?: Trust };
}

/** What {@linkcode PinVerdicts} is given by its hub. */
export interface PinVerdictsOptions {
  /** The pin store; undefined = every tool mounted, nothing held. */
  pins?: PinStore;
  log: (line: string) => void;
  /** A server by name, as the hub has it now (undefined when gone). */
  server(name: string): VerdictServer | undefined;
  /** Reports the store failing (the hub warns once). */
  storeFailed(error: unknown): void;
  /** Announces that a held tool was approved (the catalog changes). */
  changed(): void;
}

/** Pin verdicts of one hub's servers (see the module's note). */
export class PinVerdicts {
  #options: PinVerdictsOptions;
  /** Verdicts per server, for the tool list they were computed from. */
  #verdicts = new Map<string, { tools: readonly PackedTool[]; verdict: PackedVerdict }>();
  /** Checks in progress (taken in slices by the catalog build), per server, for the list checked. */
  #runs = new Map<string, { tools: readonly PackedTool[]; steps: Stepper<PackedVerdict> }>();
  #timer?: ReturnType<typeof setInterval>;
  #closed = false;

  constructor(options: PinVerdictsOptions) {
    this.#options = options;
  }

  /** The verdict on a server's current tools, computed at once when not known. */
  verdict(d: VerdictServer): PackedVerdict {
    const memo = this.#verdicts.get(d.name);
    if (memo && memo.tools === d.tools) return memo.verdict;
    return this.#run(d).finish();
  }

  /** {@linkcode PinVerdicts.verdict} stepwise (the catalog build takes it in slices). */
  *steps(d: VerdictServer): Generator<void, PackedVerdict> {
    const memo = this.#verdicts.get(d.name);
    if (memo && memo.tools === d.tools) return memo.verdict;
    return yield* this.#run(d).steps();
  }

  /** The one check of a server's current tools, shared by the sliced catalog build and `verdict`. */
  #run(d: VerdictServer): Stepper<PackedVerdict> {
    const run = this.#runs.get(d.name);
    if (run && run.tools === d.tools) return run.steps;
    const steps = new Stepper(this.#verdictSteps(d, d.tools));
    this.#runs.set(d.name, { tools: d.tools, steps });
    return steps;
  }

  /** The pin check of one tool list, stepwise (a 100,000-tool list is hashed and written in slices). */
  *#verdictSteps(d: VerdictServer, tools: readonly PackedTool[]): Generator<void, PackedVerdict> {
    const pins = this.#options.pins;
    if (!pins) return { mounted: [...tools], held: [] };
    const memo = this.#verdicts.get(d.name);
    if (memo && memo.tools === tools) return memo.verdict;
    let verdict: PackedVerdict;
    try {
      verdict = yield* checkPacked(pins, d.name, d.config.trust ?? "changes", tools);
    } catch (error) {
      // The store is unavailable: nothing can be compared, so changed tools cannot be told apart.
      this.#options.storeFailed(error);
      verdict = { mounted: [...tools], held: [] };
    } finally {
      if (this.#runs.get(d.name)?.tools === tools) this.#runs.delete(d.name);
    }
    for (const h of verdict.held) {
      if (!memo?.verdict.held.some((m) => m.tool === h.tool && m.since === h.since)) {
        this.#options.log(`server "${d.name}": ${heldMessage(h)}`);
      }
    }
    this.#verdicts.set(d.name, { tools, verdict });
    this.#watchApprovals();
    return verdict;
  }

  /**
   * Looks for approvals (`mcphub approve` in another process) every 2 s: one timer for the hub's life
   * once a verdict was taken, re-reading only the servers that have held tools (a no-op otherwise).
   */
  #watchApprovals(): void {
    if (this.#timer !== undefined || this.#closed) return;
    let busy = false;
    this.#timer = setInterval(async () => {
      if (busy) return;
      busy = true;
      try {
        // A shared store is re-read first (approvals made on another replica), only while tools are held.
        const pins = this.#options.pins;
        if (pins?.refresh && [...this.#verdicts.values()].some((m) => m.verdict.held.length > 0)) {
          await pins.refresh();
        }
        if (!this.#closed) await new Stepper(this.#recheckSteps()).finishAsync();
      } catch (error) {
        this.#options.log(`warning: checking tool approvals failed: ${messageOf(error)}`);
      } finally {
        busy = false;
      }
    }, 2000);
    Deno.unrefTimer(this.#timer);
  }

  /**
   * Re-reads the pins of the held tools (only those: a server listing 100,000 tools is not hashed again
   * every 2 s because one of them is held); announces a change when one was approved.
   */
  recheck(): void {
    new Stepper(this.#recheckSteps()).finish();
  }

  /** {@link PinVerdicts.recheck} stepwise: the timer takes it in slices (under `trust: pin`, all 100,000 tools may be held). */
  *#recheckSteps(): Generator<void, void> {
    const pins = this.#options.pins;
    if (!pins) return;
    let changed = false;
    // A snapshot: entries are replaced while iterating.
    for (const [name, memo] of [...this.#verdicts]) {
      if (memo.verdict.held.length === 0) continue;
      const d = this.#options.server(name);
      if (!d || d.tools !== memo.tools) {
        // Gone, or listed anew since (which announced a change): the next catalog build takes a whole verdict.
        if (this.#verdicts.get(name) === memo) this.#verdicts.delete(name);
        continue;
      }
      const held = new Set(memo.verdict.held.map((h) => h.tool));
      const trust = d.config.trust ?? "changes";
      const tools = d.tools.filter((t) => held.has(t.name));
      let again: PackedVerdict;
      try {
        again = yield* checkPacked(pins, name, trust, tools);
      } catch (error) {
        this.#options.storeFailed(error);
        continue;
      }
      // Replaced meanwhile (a new list, a catalog build): that verdict is newer than this one.
      if (this.#closed || this.#verdicts.get(name) !== memo) continue;
      if (again.held.length === held.size && again.held.every((h) => held.has(h.tool))) continue;
      this.#verdicts.set(name, {
        tools: memo.tools,
        verdict: { mounted: [...memo.verdict.mounted, ...again.mounted], held: again.held },
      });
      changed = true;
    }
    if (changed) this.#options.changed();
  }

  /** Stops the watch; verdicts asked later are still computed. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The pin check of packed tools: unpacked stepwise ({@link PIN_CHUNK} a step) for the store's check, which
 * sees the definitions as listed; the mounted tools stay the packed ones. The unpacked definitions live
 * only as long as the check.
 */
function* checkPacked(
  pins: PinStore,
  server: string,
  trust: Trust,
  tools: readonly PackedTool[],
): Generator<void, PackedVerdict> {
  const defs: ToolDefinition[] = [];
  const packedOf = new Map<ToolDefinition, PackedTool>();
  for (let i = 0; i < tools.length; i++) {
    if (i % PIN_CHUNK === PIN_CHUNK - 1) yield;
    const def = unpackTool(tools[i]!);
    defs.push(def);
    packedOf.set(def, tools[i]!);
  }
  const verdict = pins.checkSteps
    ? yield* pins.checkSteps(server, trust, defs)
    : pins.check(server, trust, defs);
  return { mounted: verdict.mounted.map((def) => packedOf.get(def) ?? packTool(def)), held: verdict.held };
}
