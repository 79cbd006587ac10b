/**
 * The `memvault/verify` entry point: the audit trail's verification, for a host that checks the
 * hash chains itself rather than with `memvault audit verify`.
 */
// verifyChains wrapped with its argument checks (src/entry/functions.ts).
export { verifyChains } from './entry/functions.js';
export {
  collectFileChains,
  collectStoreChains,
  type VerifyReport,
  type VerifyOptions,
  type ChainWitness,
} from './audit/index.js';
export { readCheckpointFile } from './audit/checkpoints.js';
