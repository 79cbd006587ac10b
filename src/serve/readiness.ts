/**
 * GET /readyz: the store answers and the key opens (vault.checkReady: the deployment record read and
 * unwrapped now). Probes come every second or so from each load balancer; the outcome, good or bad,
 * is kept for `cacheMs` and probes that arrive while a check runs share it, so the store (and KMS)
 * see at most one check per window whatever the probe rate. Fails closed: no answer is not ready.
 */
import { isMemvaultError } from '../errors.js';
import { ProblemError } from './problems.js';

export const DEFAULT_READY_CACHE_MS = 5_000;

export class Readiness {
  private checked: { at: number; failure?: ProblemError } | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly check: () => Promise<void>,
    private readonly cacheMs = DEFAULT_READY_CACHE_MS,
    private readonly now: () => number = Date.now,
    private readonly onFailure: (error: unknown) => void = () => undefined,
  ) {
    if (!Number.isSafeInteger(cacheMs) || cacheMs < 0) throw new RangeError('readyCacheMs must be a whole number >= 0');
  }

  /** Resolves when ready; throws the ProblemError to answer otherwise. */
  async assertReady(): Promise<void> {
    if (!this.checked || this.now() - this.checked.at >= this.cacheMs) {
      this.running ??= this.run().finally(() => (this.running = undefined));
      await this.running;
    }
    if (this.checked?.failure) throw this.checked.failure;
  }

  private async run(): Promise<void> {
    try {
      await this.check();
      this.checked = { at: this.now() };
    } catch (error) {
      this.onFailure(error);
      this.checked = { at: this.now(), failure: failureOf(error) };
    }
  }
}

function failureOf(error: unknown): ProblemError {
  // Which key or record is the operator's business (the log says it); the probe learns only the kind.
  if (isMemvaultError(error, 'KEY_UNAVAILABLE') || isMemvaultError(error, 'STORE_INCONSISTENT'))
    return new ProblemError('key-unavailable', 'The configured key does not open this deployment now.');
  return new ProblemError('unavailable', 'The store does not answer.');
}
