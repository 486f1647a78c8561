/**
 * The SDK's `Client` and its Ajv validator, loaded when the first downstream server connects
 * (`loadClientSdk` in sdk_downstream.ts): Ajv is ~30 ms of module loading, none of it needed to answer the host's
 * `initialize` (see host_server.ts).
 *
 * @module
 */
export { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/validation/ajv"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaValidator, jsonSchemaValidator } from "./sdk_downstream.ts";

export { AjvJsonSchemaValidator };

/**
 * The SDK client's check of a result's `structuredContent` against the tool's `outputSchema`, unchanged,
 * but with Ajv created and each schema compiled the first time a result is checked: the SDK's default
 * compiles every output schema of every listing at once, for tools that may never be called (and one
 * Ajv instance per connection whether or not any is).
 */
export function lazyValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return {
    getValidator<T>(schema: Parameters<jsonSchemaValidator["getValidator"]>[0]) {
      let validate: JsonSchemaValidator<T> | undefined;
      return (input: unknown) => {
        validate ??= (ajv ??= new AjvJsonSchemaValidator()).getValidator<T>(schema);
        return validate(input);
      };
    },
  };
}
