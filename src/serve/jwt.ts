/**
 * A user's own bearer JWT, verified with jose against the identity provider's JWKS: signature by a
 * key of the set (an unknown `kid` fails), an algorithm of the allow-list (never `none`, never an
 * HMAC: a public key is no secret), the issuer and audience, exp/nbf within a bounded clock skew.
 * The user is the token's `sub`; a Memvault-User header, if sent, must name that same user.
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { validateUserId } from '../crypto/user-id.js';
import {
  bearerToken,
  singleHeader,
  UNAUTHORIZED_HEADERS,
  USER_HEADER,
  rateKeyOf,
  type Caller,
  type CredentialRequest,
  type CredentialVerifier,
} from './identity.js';
import { ProblemError } from './problems.js';
import { API_KEY_PREFIX } from './api-keys.js';
import { VerifiedTokens, type VerifiedClaims } from './verified-tokens.js';

/** Asymmetric algorithms only: a JWKS publishes public keys, which must never verify an HMAC. */
export const ALLOWED_JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** Seconds of clock skew tolerated on a token's times unless JwtOptions.clockSkewSeconds says otherwise. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30;

export interface JwtOptions {
  /** The JWKS URL of the identity provider (https, or http on loopback for tests). */
  jwksUrl: string | URL;
  issuer: string;
  audience: string;
  /** A subset of ALLOWED_JWT_ALGORITHMS (default: all of them). */
  algorithms?: string[];
  /** Seconds of clock skew tolerated on exp and nbf (default 30, at most 300). */
  clockSkewSeconds?: number;
  /** Testing and custom key sources: the key resolver itself instead of a fetched JWKS. */
  keys?: JWTVerifyGetKey;
  /**
   * Seconds a verified token is remembered (its signature not checked again; never past its exp),
   * default 60, at most 300; 0 checks every request (verified-tokens.ts).
   */
  verifiedCacheSeconds?: number;
}

function invalid(detail: string): ProblemError {
  return new ProblemError('unauthorized', detail, UNAUTHORIZED_HEADERS);
}

export function checkJwtOptions(
  options: JwtOptions,
): Required<Pick<JwtOptions, 'algorithms' | 'clockSkewSeconds' | 'verifiedCacheSeconds'>> {
  const algorithms = options.algorithms ?? [...ALLOWED_JWT_ALGORITHMS];
  if (algorithms.length === 0 || algorithms.some((a) => !(ALLOWED_JWT_ALGORITHMS as readonly string[]).includes(a)))
    throw new RangeError(`JWT algorithms must be among ${ALLOWED_JWT_ALGORITHMS.join(', ')}`);
  const clockSkewSeconds = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  if (!Number.isInteger(clockSkewSeconds) || clockSkewSeconds < 0 || clockSkewSeconds > 300)
    throw new RangeError('the JWT clock skew must be 0 to 300 seconds');
  if (typeof options.issuer !== 'string' || options.issuer === '') throw new RangeError('a JWT issuer is required');
  if (typeof options.audience !== 'string' || options.audience === '')
    throw new RangeError('a JWT audience is required');
  const verifiedCacheSeconds = options.verifiedCacheSeconds ?? 60;
  if (!Number.isInteger(verifiedCacheSeconds) || verifiedCacheSeconds < 0 || verifiedCacheSeconds > 300)
    throw new RangeError('verifiedCacheSeconds must be a whole number from 0 to 300');
  return { algorithms, clockSkewSeconds, verifiedCacheSeconds };
}

/** The token's signature, issuer, audience and times checked (jose); its claims, or a 401. */
async function verifyToken(
  token: string,
  keys: JWTVerifyGetKey,
  options: JwtOptions,
  algorithms: string[],
  clockSkewSeconds: number,
): Promise<VerifiedClaims> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms,
      issuer: options.issuer,
      audience: options.audience,
      clockTolerance: clockSkewSeconds,
      requiredClaims: ['sub', 'exp'],
    }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw invalid('The token has expired.');
    if (error instanceof joseErrors.JOSEError) throw invalid('The token is not valid for this service.');
    // The JWKS could not be fetched: the credential is not proven, so it is refused (fail closed).
    throw invalid('The token could not be verified.');
  }
  // The same rule as every user id (vault.run's): non-blank, bounded, no controls, well-formed UTF-16.
  let sub: string;
  try {
    sub = validateUserId(payload.sub);
  } catch {
    throw invalid('The token names no usable subject.');
  }
  return { sub, exp: payload.exp!, ...(typeof payload.iat === 'number' ? { iat: payload.iat } : {}) };
}

export function jwtVerifier(options: JwtOptions): CredentialVerifier {
  const { algorithms, clockSkewSeconds, verifiedCacheSeconds } = checkJwtOptions(options);
  const verified = new VerifiedTokens(verifiedCacheSeconds * 1000, clockSkewSeconds);
  const keys =
    options.keys ?? createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 });
  return {
    kind: 'user-token',
    recognises: (request) => {
      const token = bearerToken(request);
      return token !== undefined && !token.startsWith(API_KEY_PREFIX);
    },
    async verify(request: CredentialRequest): Promise<Caller> {
      const token = bearerToken(request) ?? '';
      let claims = verified.get(token);
      if (!claims) {
        claims = await verifyToken(token, keys, options, algorithms, clockSkewSeconds);
        verified.set(token, claims);
      }
      const sub = claims.sub;
      const named = singleHeader(request, USER_HEADER);
      if (named !== undefined && named !== sub)
        throw new ProblemError('forbidden', "A user's token acts only for that user; leave out Memvault-User.");
      return {
        kind: 'user-token',
        userId: sub,
        actor: 'user',
        rateKey: rateKeyOf('sub', sub),
        ...(claims.iat !== undefined ? { issuedAt: claims.iat } : {}),
      };
    },
  };
}
