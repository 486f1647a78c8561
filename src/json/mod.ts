/**
 * JSON utilities below every other layer (they import nothing): {@linkcode parseJson}, `JSON.parse` that
 * V8's escaped-key bug cannot betray.
 *
 * @module
 */
export { hasEscapedKey, parseJson } from "./safe_json.ts";
