/**
 * JSON utilities below every other layer (they import nothing): {@linkcode parseJson}, `JSON.parse` that
 * V8's escaped-key bug cannot betray, and {@linkcode installJsonGuard}, which makes the global
 * `JSON.parse` and `Body.json()` so for everything in the process (main.ts loads `install.ts` first).
 *
 * @module
 */
export { hasEscapedKey, parseJson } from "./safe_json.ts";
export { guardBodies, guardedJsonParse, installJsonGuard, jsonGuardInstalled } from "./guard.ts";
