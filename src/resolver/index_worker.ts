/**
 * The Web Worker that holds a large catalog's resolver index (see `index_host.ts`): the index of
 * 100,000 tools is a heap of about 1.4 GB whose garbage-collection pauses would otherwise hold the
 * gateway's event loop for 0.2–0.35 s at a time. It receives the tools in batches, builds the index
 * and the catalog revision in one piece (its own event loop has nothing else to do), then answers
 * search_tools and resolve_tool queries by message. Messages are {@link WorkerRequest} and
 * {@link WorkerReply}. The worker's entry is `index_worker_main.ts`, which lowers the thread's priority
 * before this module (and the resolver) is loaded.
 *
 * @module
 */
import { type CatalogTool, type EntryFields, reviveEntry } from "../catalog/mod.ts";
import {
  buildIndex,
  catalogRevision,
  type QueryArguments,
  resolveResponse,
  type ResolverIndex,
  type ResponseContext,
  searchResponse,
} from "./mod.ts";

/**
 * What the host sends: tools in batches, then `build`, then queries; `release` frees the index. One
 * worker serves one build after another (see `IndexWorkerPool`): every request names its `lease`, and a
 * request of a new lease drops what the worker held for the previous one.
 */
export type WorkerRequest =
  & { lease: number }
  & (
    | { type: "tools"; tools: WireTool[] }
    | { type: "build" }
    | {
      type: "query";
      id: number;
      kind: "search" | "resolve";
      args: QueryArguments;
      context: ResponseContext;
    }
    | { type: "release" }
  );

/**
 * A catalog entry as it is sent to the worker: its names and server metadata, the definition packed
 * (a string clones far faster than the object graph of a definition); the worker parses it once.
 */
export type WireTool = EntryFields;

/** What the worker answers: `built` once (or `failed`), then one `answer` per query id; each names its lease. */
export type WorkerReply =
  & { lease: number }
  & (
    | { type: "built"; revision: string }
    | { type: "failed"; message: string }
    | { type: "answer"; id: number; value: unknown }
    | { type: "answer"; id: number; error: { name: string; message: string } }
  );

/** Handles the messages of one worker; exported so the protocol is testable without a thread. */
export function workerHandler(post: (reply: WorkerReply) => void): (request: WorkerRequest) => void {
  let tools: CatalogTool[] = [];
  let index: ResolverIndex | undefined;
  let current: number | undefined;
  return (request) => {
    const lease = request.lease;
    if (lease !== current || request.type === "release") {
      // A new build (or the end of this one): what the previous lease held is garbage now.
      tools = [];
      index = undefined;
      current = request.type === "release" ? undefined : lease;
    }
    if (request.type === "tools") {
      for (const tool of request.tools) tools.push(reviveEntry(tool));
    } else if (request.type === "build") {
      try {
        index = buildIndex(tools);
        post({ lease, type: "built", revision: catalogRevision(tools) });
      } catch (error) {
        post({ lease, type: "failed", message: error instanceof Error ? error.message : String(error) });
      }
    } else if (request.type === "query") {
      try {
        if (!index) throw new Error("the index is not built yet");
        const value = request.kind === "search"
          ? searchResponse(index, request.args, request.context)
          : resolveResponse(index, request.args, request.context);
        post({ lease, type: "answer", id: request.id, value });
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        post({ lease, type: "answer", id: request.id, error: { name: e.name, message: e.message } });
      }
    }
  };
}
