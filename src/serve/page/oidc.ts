/**
 * OpenID Connect login for the memory page: authorization code with PKCE (S256), state and nonce,
 * through openid-client. The person's user id is one claim of the verified ID token (default `sub`),
 * checked as every user id is; nothing the browser sends can name it.
 */
import * as client from 'openid-client';
import { validateUserId } from '../../crypto/user-id.js';
import { ProblemError } from '../problems.js';
import type { LoginState } from './session.js';

export interface OidcOptions {
  /** The provider's issuer URL (its discovery document is at /.well-known/openid-configuration). */
  issuer: string;
  clientId: string;
  /** For a confidential client; a public client (no secret) relies on PKCE alone. */
  clientSecret?: string;
  /** The claim of the ID token that is the user id (default `sub`). */
  userClaim?: string;
  /** Scopes asked for (default `openid`; add `email` or `profile` when the user claim needs them). */
  scope?: string;
}

export interface OidcLogin {
  /** Where to send the browser, and what to keep (sealed) until it comes back. */
  start(redirectUri: string, now: number): Promise<{ url: string; state: LoginState }>;
  /** The user id the callback proves, or a ProblemError. */
  finish(callbackUrl: URL, state: LoginState): Promise<string>;
}

function isLoopbackUrl(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}

export async function oidcLogin(options: OidcOptions): Promise<OidcLogin> {
  const issuer = new URL(options.issuer);
  const insecure = issuer.protocol === 'http:';
  // Plain HTTP to the provider only on loopback (a provider the operator runs beside the service, or tests).
  if (insecure && !isLoopbackUrl(issuer)) throw new RangeError('the OpenID issuer must be an https URL');
  let config: client.Configuration;
  try {
    config = await client.discovery(
      issuer,
      options.clientId,
      undefined,
      options.clientSecret === undefined ? client.None() : client.ClientSecretBasic(options.clientSecret),
      insecure ? { execute: [client.allowInsecureRequests] } : undefined,
    );
  } catch {
    throw new RangeError("the OpenID issuer's discovery document could not be read (check the issuer URL)");
  }
  const userClaim = options.userClaim ?? 'sub';
  const scope = options.scope ?? 'openid';

  return {
    async start(redirectUri, now) {
      const verifier = client.randomPKCECodeVerifier();
      const state: LoginState = { state: client.randomState(), nonce: client.randomNonce(), verifier, created: now };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: state.state,
        nonce: state.nonce,
      });
      return { url: url.href, state };
    },
    async finish(callbackUrl, state) {
      let claims;
      try {
        const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: state.verifier,
          expectedState: state.state,
          expectedNonce: state.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
      } catch {
        throw new ProblemError('unauthorized', 'The sign-in could not be verified; sign in again.');
      }
      const user = claims?.[userClaim];
      if (typeof user !== 'string' || user === '')
        throw new ProblemError('forbidden', 'The identity provider did not give the claim this service needs.');
      try {
        return validateUserId(user);
      } catch {
        throw new ProblemError('forbidden', 'The identity provider gave a user id this service cannot use.');
      }
    },
  };
}
