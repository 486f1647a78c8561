/**
 * OAuth for remote servers: tokens and client registrations in the store, the
 * SDK's auth provider over them, and the login flow behind `mcphub auth login`.
 * Sits at the store/config layer: the hub and the CLI use it, it uses neither.
 *
 * @module
 */
export * from "./light.ts";
export { login, LoginError, type LoginMode, type LoginOptions, openBrowser } from "./login.ts";
