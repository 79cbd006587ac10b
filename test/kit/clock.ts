import { DAY_MS } from '../../src/expiry/config.js';

/**
 * The one clock a test advances by hand, shared by the store (LastModified), the vault, the sweeper
 * and the audit writer: `now` gives a Date (expiry's `now` option), `nowMs` milliseconds (the audit
 * writer's `now`). Both are bound, so they can be handed over as they are.
 */
export class ManualClock {
  private t: number;
  constructor(start: string | number = '2025-01-01T00:00:00.000Z') {
    this.t = typeof start === 'number' ? start : Date.parse(start);
  }
  readonly now = (): Date => new Date(this.t);
  readonly nowMs = (): number => this.t;
  advanceDays(days: number): void {
    this.t += days * DAY_MS;
  }
  advanceMs(ms: number): void {
    this.t += ms;
  }
}
