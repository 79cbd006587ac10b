/** Kept for existing imports: the clock and the expiry setup live in the test kit (test/kit/). */
export { ManualClock } from '../kit/clock.js';
export { counted, expiryFor, filesOf } from '../kit/expiry.js';
