/**
 * What `mcp serve` on stdio needs of the host side before the gateway loads (start-up time): the host's
 * input, and the `initialize` answered early (see early.ts, initialize.ts). No SDK, no hub; `mod.ts` is
 * all of the room.
 *
 * @module
 */
export { answerEarly, gatewayAnswerer, type HostStart } from "./early.ts";
export { hostInput } from "./host_input.ts";
export { initializeAnswer, instructionsText, scopeOf } from "./initialize.ts";
