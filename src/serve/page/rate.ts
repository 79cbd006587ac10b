/**
 * The memory page's rate limits: a fixed window per key (a session, or the client's address for the
 * sign-in routes), in this process. A key over its limit gets 429 and a page saying when to retry.
 * Bounded: at most MAX_KEYS keys are tracked; when full, expired windows go first, then the oldest.
 */
import { ProblemError } from '../problems.js';

export interface RateLimit {
  /** Requests a key may make per window. */
  max: number;
  windowMs: number;
}

export interface PageRateLimits {
  /** Requests per signed-in session (default 300 a minute). */
  session: RateLimit;
  /** Sign-in starts and callbacks per client address (default 20 a minute). */
  login: RateLimit;
}

export const DEFAULT_PAGE_RATE_LIMITS: PageRateLimits = {
  session: { max: 300, windowMs: 60_000 },
  login: { max: 20, windowMs: 60_000 },
};

const MAX_KEYS = 10_000;

export class RateWindow {
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly what: string,
  ) {
    if (
      !Number.isSafeInteger(limit.max) ||
      limit.max < 1 ||
      !Number.isSafeInteger(limit.windowMs) ||
      limit.windowMs < 1
    )
      throw new RangeError('a page rate limit needs a positive integer max and windowMs');
  }

  /** Counts one request of `key`, or throws a 429 ProblemError with Retry-After. */
  take(key: string, now: number): void {
    let window = this.#windows.get(key);
    if (!window || now - window.start >= this.limit.windowMs) {
      if (window) this.#windows.delete(key);
      else if (this.#windows.size >= MAX_KEYS) this.#evict(now);
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    if (window.count > this.limit.max) {
      const retryAfter = Math.max(1, Math.ceil((window.start + this.limit.windowMs - now) / 1000));
      throw new ProblemError(
        'rate-limited',
        `Too many ${this.what} in a short time. Wait ${retryAfter} seconds, then try again.`,
        { 'retry-after': String(retryAfter) },
      );
    }
  }

  #evict(now: number): void {
    for (const [key, window] of this.#windows) if (now - window.start >= this.limit.windowMs) this.#windows.delete(key);
    if (this.#windows.size >= MAX_KEYS) this.#windows.delete(this.#windows.keys().next().value!);
  }
}
