/**
 * The entry of the index worker (see `index_host.ts`): lowers the worker thread's scheduling priority
 * first, then loads `index_worker.ts` (with the resolver and its lexicon, a large compile) and hands it
 * every message, those that arrived while it loaded first.
 *
 * @module
 */
import { getPriority, setPriority } from "node:os";
import type { WorkerReply, WorkerRequest } from "./index_worker.ts";

/**
 * The nice value the worker gives its own thread (Linux: a thread's priority is its own). On a machine
 * with few cores the worker (loading the resolver, then building) and the gateway's event loop compete
 * for a CPU; below the gateway, the worker still gets every idle cycle, but the event loop gets a core
 * as soon as it has work.
 */
export const INDEX_WORKER_NICE = 10;

/**
 * Lowers this thread's scheduling priority to `nice` (if it is not that low already); true when done.
 * Only where it can be done without asking (read and sys permissions already granted: a prompt would
 * read the protocol's stdin) and where a thread has an id of its own (Linux `/proc/thread-self`);
 * elsewhere nothing.
 */
export function lowerThreadPriority(nice = INDEX_WORKER_NICE): boolean {
  try {
    const read = Deno.permissions.querySync({ name: "read", path: "/proc/thread-self" }).state;
    const sys = Deno.permissions.querySync({ name: "sys", kind: "setPriority" }).state;
    if (read !== "granted" || sys !== "granted") return false;
    const tid = Number(Deno.readLinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    // A thread starts at its creator's nice value; it is never raised (that needs a privilege).
    if (getPriority(tid) >= nice) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

interface WorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerReply): void;
}

// Only when started as a worker (importing this file runs nothing).
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined") {
  lowerThreadPriority();
  const scope = globalThis as unknown as WorkerScope;
  const early: WorkerRequest[] = [];
  scope.onmessage = (event) => early.push(event.data);
  const { workerHandler } = await import("./index_worker.ts");
  const handle = workerHandler((reply) => scope.postMessage(reply));
  scope.onmessage = (event) => handle(event.data);
  for (const request of early.splice(0)) handle(request);
}
