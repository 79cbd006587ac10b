/**
 * The memory page's sessions: a sealed cookie (AES-256-GCM under a key derived from the operator's
 * secret) holding the user id taken from the verified ID token, a CSRF token, and the two times the
 * timeouts need. Nothing in it can be read or changed by the browser; a cookie that does not open,
 * is past its idle or absolute timeout, or was sealed for another purpose is no session at all.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export interface PageSession {
  /** The user id from the ID token's configured claim (validated as every user id is). */
  user: string;
  /** Synchronizer token every state-changing form carries. */
  csrf: string;
  /** When the person logged in (ms since the epoch): the absolute timeout counts from here. */
  created: number;
  /** The last request (ms): the idle timeout counts from here. */
  seen: number;
}

/** What the login step keeps between the redirect to the provider and the callback. */
export interface LoginState {
  state: string;
  nonce: string;
  verifier: string;
  created: number;
}

export interface SessionTimeouts {
  idleMs: number;
  absoluteMs: number;
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000 };
/** A login that has not come back from the provider in this time starts over. */
export const LOGIN_STATE_MS = 10 * 60_000;
/** A sealed cookie longer than this is not opened (bounded work before any decryption). */
const MAX_SEALED_CHARS = 4096;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type SealPurpose = 'session' | 'login';

/** Seals and opens cookie values; each purpose is bound as associated data, so one cannot stand for another. */
export class CookieSealer {
  readonly #key: Buffer;

  constructor(secret: Uint8Array) {
    if (secret.byteLength < 32) throw new RangeError('the session secret must be at least 32 bytes');
    this.#key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'memvault page cookies v1', 32));
  }

  seal(purpose: SealPurpose, value: object): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(purpose));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  open(purpose: SealPurpose, sealed: string | undefined): unknown {
    if (sealed === undefined || sealed.length > MAX_SEALED_CHARS || !/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined;
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.byteLength < IV_BYTES + TAG_BYTES + 2) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(raw.subarray(raw.byteLength - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES, raw.byteLength - TAG_BYTES)),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }
}

function isSession(value: unknown): value is PageSession {
  const v = value as Partial<PageSession> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.user === 'string' &&
    typeof v.csrf === 'string' &&
    typeof v.created === 'number' &&
    typeof v.seen === 'number'
  );
}

export function isLoginState(value: unknown): value is LoginState {
  const v = value as Partial<LoginState> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.state === 'string' &&
    typeof v.nonce === 'string' &&
    typeof v.verifier === 'string' &&
    typeof v.created === 'number'
  );
}

export function newSession(user: string, now: number): PageSession {
  return { user, csrf: randomBytes(32).toString('base64url'), created: now, seen: now };
}

/** The session a cookie holds, or undefined when it does not open or has timed out. */
export function openSession(
  sealer: CookieSealer,
  sealed: string | undefined,
  timeouts: SessionTimeouts,
  now: number,
): PageSession | undefined {
  const value = sealer.open('session', sealed);
  if (!isSession(value)) return undefined;
  if (now - value.seen > timeouts.idleMs || now - value.created > timeouts.absoluteMs) return undefined;
  if (value.seen > now + 60_000) return undefined;
  return value;
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function csrfMatches(session: PageSession, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || submitted.length !== session.csrf.length) return false;
  return timingSafeEqual(Buffer.from(submitted), Buffer.from(session.csrf));
}

/** Sessions ended by logout (or erasure) before their timeouts: most this instance remembers at once. */
export const MAX_REVOKED_SESSIONS = 100_000;

/**
 * Ended sessions, by their CSRF token's hash, until their absolute timeout passes: a copy of the
 * cookie kept from before the logout opens nothing. Held in this process (see docs/page.md).
 */
export class RevokedSessions {
  readonly #until = new Map<string, number>();

  constructor(private readonly timeouts: SessionTimeouts) {}

  static idOf(session: PageSession): string {
    return createHash('sha256').update(session.csrf).digest('base64url');
  }

  revoke(session: PageSession, now: number): void {
    for (const [id, until] of this.#until) if (until <= now) this.#until.delete(id);
    // Full: the oldest entry goes (its session is the nearest to its own timeout).
    if (this.#until.size >= MAX_REVOKED_SESSIONS) this.#until.delete(this.#until.keys().next().value!);
    this.#until.set(RevokedSessions.idOf(session), session.created + this.timeouts.absoluteMs);
  }

  has(session: PageSession): boolean {
    return this.#until.has(RevokedSessions.idOf(session));
  }
}
