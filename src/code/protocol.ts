/**
 * The sandbox's wire: newline-delimited JSON over the child's stdin (gateway → sandbox) and stdout
 * (sandbox → gateway). Only the gateway holds these pipes; the code inside has no other way out.
 *
 * @module
 */

/** The argument that starts a compiled `mcphub` binary as the sandbox instead of the CLI. */
export const SANDBOX_ARG = "__mcphub_code_sandbox";

/** Gateway → sandbox: the program to run (first line). */
export interface RunMessage {
  t: "run";
  code: string;
  /** The sandbox process's resident memory limit, MiB (ArrayBuffers live outside the V8 heap cap). */
  memoryMb?: number;
}

/** Gateway → sandbox: the answer to one inner call. */
export interface AnswerMessage {
  t: "answer";
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

/** Sandbox → gateway: one inner tool call. */
export interface CallMessage {
  t: "call";
  id: number;
  name: string;
  args: Record<string, unknown>;
}

/** Sandbox → gateway: one captured console line. */
export interface LogMessage {
  t: "log";
  text: string;
}

/** Sandbox → gateway: the program finished (returned, or threw). */
export interface DoneMessage {
  t: "done";
  ok: boolean;
  /** The returned value (JSON); absent when it returned nothing. */
  value?: unknown;
  error?: string;
  /** The line of the program where an uncaught error was thrown (1 = the first line of `code`). */
  line?: number;
}

/** Any line the sandbox sends. */
export type SandboxMessage = CallMessage | LogMessage | DoneMessage;
