/**
 * OAuth for remote servers: tokens and client registrations in the store, the
 * SDK's auth provider over them, and the login flow behind `mcphub auth login`.
 * Sits at the store/config layer: the hub and the CLI use it, it uses neither.
 *
 * @module
 */
export { authMigrations, type AuthRecord, AuthStore, type AuthUpdate } from "./store.ts";
export {
  type AuthTarget,
  type InteractiveOptions,
  isAuthError,
  loginCommand,
  NeedsLoginError,
  ServerAuth,
  serverAuth,
  StoreOAuthProvider,
} from "./provider.ts";
export { login, LoginError, type LoginMode, type LoginOptions, openBrowser } from "./login.ts";
