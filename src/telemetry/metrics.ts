/**
 * The instruments, created from the global meter provider through @opentelemetry/api only. With no
 * provider registered the API hands out its no-op meter; we notice that and record nothing (one
 * global lookup per call). Instruments are re-created when the host registers or replaces its
 * provider, so a provider registered after memvault was loaded still receives every signal.
 */
import {
  createNoopMeter,
  metrics,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
} from '@opentelemetry/api';
import { INSTRUMENTATION_SCOPE, METRICS } from './names.js';

export interface Instruments {
  commands: Counter;
  commandDuration: Histogram;
  storeRequests: Counter;
  storeDuration: Histogram;
  writeConflicts: Counter;
  writeRetries: Counter;
  quotaRefusals: Counter;
  piiFindings: Counter;
  auditRecords: Counter;
  auditWriteDuration: Histogram;
  sweeperRuns: Counter;
  sweeperScanned: Counter;
  sweeperDeleted: Counter;
  keyCacheLookups: Counter;
  listingSkipped: Counter;
}

/** Seconds; from a cached in-memory read (~100 µs) to a slow S3 call under retries (10 s). */
const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

const NOOP_METER = createNoopMeter();

function create(meter: Meter): Instruments {
  const histogram = (name: string, description: string) =>
    meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: LATENCY_BUCKETS } });
  return {
    commands: meter.createCounter(METRICS.commands, {
      description: 'Memory tool commands, by command and outcome',
      unit: '{command}',
    }),
    commandDuration: histogram(METRICS.commandDuration, 'Duration of a memory tool command, key load to result'),
    storeRequests: meter.createCounter(METRICS.storeRequests, {
      description: 'Requests to the object store, by request type and status',
      unit: '{request}',
    }),
    storeDuration: histogram(METRICS.storeDuration, 'Duration of one object-store operation (SDK retries included)'),
    writeConflicts: meter.createCounter(METRICS.writeConflicts, {
      description: 'Conditional store writes refused because the object changed or exists',
      unit: '{conflict}',
    }),
    writeRetries: meter.createCounter(METRICS.writeRetries, {
      description: 'Read-modify-write attempts re-run after a conflict',
      unit: '{retry}',
    }),
    quotaRefusals: meter.createCounter(METRICS.quotaRefusals, {
      description: 'Writes refused by the quota, by limit',
      unit: '{refusal}',
    }),
    piiFindings: meter.createCounter(METRICS.piiFindings, {
      description: 'Personal data found in text to be written, by type and policy action',
      unit: '{finding}',
    }),
    auditRecords: meter.createCounter(METRICS.auditRecords, {
      description: 'Audit records written, by record type and status',
      unit: '{record}',
    }),
    auditWriteDuration: histogram(METRICS.auditWriteDuration, 'Time to hand one audit record to its sink'),
    sweeperRuns: meter.createCounter(METRICS.sweeperRuns, {
      description: 'Expiry sweeper runs, by mode and outcome',
      unit: '{run}',
    }),
    sweeperScanned: meter.createCounter(METRICS.sweeperScanned, {
      description: 'Files the expiry sweeper looked at',
      unit: '{object}',
    }),
    sweeperDeleted: meter.createCounter(METRICS.sweeperDeleted, {
      description: 'Files the expiry sweeper deleted',
      unit: '{object}',
    }),
    keyCacheLookups: meter.createCounter(METRICS.keyCacheLookups, {
      description: 'User-key cache lookups, by result',
      unit: '{lookup}',
    }),
    listingSkipped: meter.createCounter(METRICS.listingSkipped, {
      description: 'Objects under a user prefix that listings skipped, by reason',
      unit: '{object}',
    }),
  };
}

let current: { provider: MeterProvider; instruments: Instruments | undefined } | undefined;

/** The instruments of the registered provider, or undefined when none is registered (record nothing). */
export function instruments(): Instruments | undefined {
  const provider = metrics.getMeterProvider();
  if (current?.provider !== provider) {
    const meter = provider.getMeter(INSTRUMENTATION_SCOPE);
    current = { provider, instruments: meter === NOOP_METER ? undefined : create(meter) };
  }
  return current.instruments;
}

/** Seconds since `startedMs` (a performance.now() reading). */
export function secondsSince(startedMs: number): number {
  return (performance.now() - startedMs) / 1000;
}
