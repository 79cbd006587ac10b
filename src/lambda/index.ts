/** `memvault/lambda`: the scheduled sweeper's handler (see handler.ts and docs/infra.md). */
export {
  createSweeperHandler,
  handler,
  SWEEPER_ENV,
  type SweeperContext,
  type SweeperEvent,
  type SweeperHandlerOptions,
  type SweeperResult,
} from './handler.js';
export { SWEEP_STATE_KEY, type SweepState } from '../expiry/checkpoint.js';
