/**
 * The token store and the OAuth provider of remote servers, without the interactive `auth login` flow
 * (`login.ts`): what `mcp serve` needs (start-up time). `mod.ts` is all of it.
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
