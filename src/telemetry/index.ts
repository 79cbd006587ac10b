export {
  ATTRS,
  INSTRUMENTATION_SCOPE,
  METRICS,
  SPANS,
  boundedCommand,
  type Outcome,
  type RetryLoop,
  type StoreOperation,
  type StoreStatus,
} from './names.js';
export { instruments } from './metrics.js';
export { activeTracer, inSpan } from './tracing.js';
export { observeStoreOperation, storeRequestCounted } from './store.js';
export {
  keyCacheLookup,
  markResult,
  observeAuditWrite,
  observeCommand,
  observeSweep,
  outcomeAttributes,
  recordDecisions,
  writeRetried,
  type ResultOutcome,
  type SweepCounts,
} from './signals.js';
