/**
 * The SDK client's output-schema check, made on a result relayed as bytes (the stdio fast path, which skips
 * the SDK's `callTool`): the client's own record of each tool's `outputSchema` validator and task support,
 * and the check with the same validator and the same errors.
 *
 * @module
 */
import { ErrorCode, type JsonSchemaValidator, loadClientSdk, McpError } from "./sdk.ts";
import { InvalidResultError, messageOf } from "./errors.ts";
import { type Member, member, RawBytes, type RawResult } from "../json/raw_json.ts";
import { parseSteps, slicedParseApplies } from "../json/sliced_json.ts";
import { Stepper } from "../json/slices.ts";

/**
 * The downstream client's record of the last `tools/list` (`Client` in sdk_client.ts, the gateway's own
 * since v2 keeps none it could read; `listToolsPage` fills it): what its `callTool` checks before and
 * after a call.
 */
export interface ToolMetadata {
  /** The tool's `outputSchema` check (see `lazyValidator` in sdk_client.ts), if it declared one. */
  getToolOutputValidator(name: string): JsonSchemaValidator<unknown> | undefined;
  /** `execution.taskSupport: "required"`: `callTool` refuses it (a task call is for the SDK's own API). */
  isToolTaskRequired(name: string): boolean;
}

/**
 * The check `Client.callTool` makes of a result of a tool with an `outputSchema`, made on a result relayed
 * as bytes: the same validator, the same errors (texts and codes), once. Only `structuredContent` is
 * parsed (a big one in slices, from the bytes as they came, read back from the spool if they were
 * spilled); the rest stays bytes.
 */
export async function checkOutput(
  name: string,
  result: RawResult,
  validate: JsonSchemaValidator<unknown>,
): Promise<void> {
  const span = member(result.members, "structuredContent");
  if (span && result.raw.at(span.start) !== 0x7b) {
    // Not an object: the SDK's parse of the result refuses it; the same parse gives the same error (the
    // client's module is loaded: a result came from a client).
    const { CallToolResultSchema, sdkSafeParse } = await loadClientSdk();
    const parsed = sdkSafeParse(CallToolResultSchema, result.parse());
    if (!parsed.success) throw parsed.error;
  }
  if (!span) {
    if (result.isError) return;
    throw new McpError(
      ErrorCode.InvalidRequest,
      `Tool ${name} has an output schema but did not return structured content`,
    );
  }
  let value: unknown;
  try {
    value = await parseSpan(result.raw, span);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new InvalidResultError(`"structuredContent" is not JSON (${error.message})`, { cause: error });
  }
  let verdict: ReturnType<JsonSchemaValidator<unknown>>;
  try {
    verdict = validate(value);
  } catch (error) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Failed to validate structured content: ${messageOf(error)}`,
    );
  }
  if (!verdict.valid) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Structured content does not match the tool's output schema: ${verdict.errorMessage}`,
    );
  }
}

/** The JSON value at `span` of `raw`: parsed at once, or in slices when big (other calls go on meanwhile). */
async function parseSpan(raw: RawBytes, span: Member): Promise<unknown> {
  const bytes = new RawBytes(raw.slice(span.start, span.end));
  if (!slicedParseApplies(bytes)) return bytes.json();
  return await new Stepper(parseSteps(bytes, 0)).finishAsync();
}
