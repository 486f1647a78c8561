/**
 * Code mode: the `run_code` meta-tool. An agent writes a short program (the body of an async
 * function) that calls tools through `mcp`; it runs in a separate Deno process with no permissions
 * at all, its tool calls cross back over the process's pipes (held only by the gateway) and go
 * through the hub's one call path under the caller's scope; only what it returns reaches the agent,
 * through the response budget. Also the TypeScript declarations of the callable tools.
 *
 * @module
 */
export {
  callValue,
  closeSandboxes,
  codeDeclarations,
  type CodeDeclarationsOptions,
  DEFAULT_TIMEOUT_MS,
  MAX_CODE_BYTES,
  outcomeResult,
  RUN_CODE,
  runCode,
  type RunCodeInput,
  runCodeInput,
  type RunCodeOptions,
  TYPES_URI,
} from "./run_code.ts";
export {
  DEFAULT_LIMITS,
  type LimitName,
  MAX_IN_FLIGHT,
  type RunOptions,
  runSandboxed,
  sandboxCommand,
  type SandboxLimits,
  type SandboxOutcome,
  SandboxPool,
} from "./sandbox.ts";
export { type DeclarationOptions, type DeclaredTool, schemaType, toolDeclarations } from "./types_dts.ts";
export { SANDBOX_ARG } from "./protocol.ts";
export { runSandbox } from "./sandbox_main.ts";
