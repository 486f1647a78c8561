/**
 * The auth seam: the MCP SDK's OAuth client (discovery, PKCE, dynamic client registration, token exchange
 * and refresh) for `src/auth/`, which loads it on first use (`loadAuthSdk` in provider.ts): a gateway
 * without OAuth servers starts without it.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/auth"
export {
  auth,
  extractWWWAuthenticateParams,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
export type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
export type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
// @ts-types="@modelcontextprotocol/sdk/server/auth/errors"
export { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
