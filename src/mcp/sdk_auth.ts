/**
 * The auth seam: the MCP SDK's OAuth client (discovery, PKCE, dynamic client registration, token exchange
 * and refresh; the v2 client package) for `src/auth/`, which loads it on first use (`loadAuthSdk` in
 * provider.ts): a gateway without OAuth servers starts without it.
 *
 * @module
 */
import { auth as sdkAuth, type AuthOptions, type OAuthClientProvider } from "@modelcontextprotocol/client";

export { extractWWWAuthenticateParams, OAuthError, UnauthorizedError } from "@modelcontextprotocol/client";
export type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";

/**
 * The OAuth options the gateway sets on every flow and transport: the authorization server metadata's
 * `issuer` is not required to equal the URL it was discovered at (RFC 8414 §3.3, which the v2 SDK checks
 * and v1 did not): a 2025-03-26 server's metadata at its own origin names another issuer, and such servers
 * kept working through the move to v2 (the conformance suite's `auth/2025-03-26-oauth-metadata-backcompat`).
 */
export const ISSUER_CHECK = { skipIssuerMetadataValidation: true } as const;

/** The SDK's `auth` flow with the gateway's options ({@linkcode ISSUER_CHECK}). */
export function auth(provider: OAuthClientProvider, options: AuthOptions): ReturnType<typeof sdkAuth> {
  return sdkAuth(provider, { ...ISSUER_CHECK, ...options });
}
