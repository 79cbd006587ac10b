/**
 * memvault's OpenTelemetry signals, end to end:   npx tsx scripts/telemetry-example.ts
 *
 * The host (this script) registers a meter provider and a tracer provider with in-memory exporters
 * and a context manager, exactly as it would register OTLP exporters in production; memvault itself
 * only uses @opentelemetry/api. A few commands run (one redacted, one refused by the quota, two
 * instances editing one file at once), then the script prints every metric point and the span tree
 * of one command. docs/observability.md describes each of them.
 */
import { context, metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { randomBytes } from 'node:crypto';
import { createVault, MemoryStore } from '../src/index.js';
// In a real host: AsyncLocalStorageContextManager from @opentelemetry/context-async-hooks (NodeSDK registers it).
import { AsyncLocalContextManager } from '../test/telemetry/harness.js';

const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
const spanExporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
context.setGlobalContextManager(new AsyncLocalContextManager());
metrics.setGlobalMeterProvider(meterProvider);
trace.setGlobalTracerProvider(tracerProvider);

const store = new MemoryStore();
const options = { store, encryption: { masterKey: randomBytes(32).toString('base64') }, quota: { maxFileBytes: 4096 } };
const vault = await createVault(options);
const other = await createVault(options);
const user = 'example-user';
await vault.run(user, { command: 'create', path: '/memories/notes.md', file_text: '# Notes\n' });
await vault.run(user, {
  command: 'create',
  path: '/memories/contact.md',
  file_text: 'Write to jane.doe@example.com\n',
});
await vault.run(user, { command: 'create', path: '/memories/huge.md', file_text: 'x'.repeat(10_000) });
await vault.run(user, { command: 'view', path: '/memories/missing.md' });
await Promise.all(
  Array.from({ length: 20 }, (_, i) =>
    (i % 2 ? vault : other).run(user, {
      command: 'insert',
      path: '/memories/notes.md',
      insert_line: 1,
      insert_text: `item ${i}`,
    }),
  ),
);
spanExporter.reset();
await vault.run(user, {
  command: 'str_replace',
  path: '/memories/notes.md',
  old_str: '# Notes',
  new_str: '# My notes',
});

await reader.forceFlush();
console.log('Metrics (cumulative):\n');
const rows: string[] = [];
for (const resource of metricExporter.getMetrics().slice(-1)) {
  for (const scope of resource.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const dp of metric.dataPoints) {
        const attrs = Object.entries(dp.attributes)
          .map(([k, v]) => `${k.replace(/^memvault\./, '')}=${String(v)}`)
          .join(' ');
        const value =
          metric.dataPointType === DataPointType.HISTOGRAM
            ? (() => {
                const h = dp.value as { count: number; sum?: number };
                return `count=${h.count} avg=${((1000 * (h.sum ?? 0)) / Math.max(1, h.count)).toFixed(2)}ms`;
              })()
            : String(dp.value);
        rows.push(`  ${metric.descriptor.name.padEnd(34)} ${value.padEnd(26)} ${attrs}`);
      }
    }
  }
}
console.log(rows.join('\n'));

console.log('\nSpans of one str_replace:\n');
const spans = spanExporter.getFinishedSpans();
const children = (parent: ReadableSpan | undefined) =>
  spans.filter((s) => s.parentSpanContext?.spanId === parent?.spanContext().spanId);
const print = (span: ReadableSpan, depth: number): void => {
  const status = span.attributes['memvault.store.status'] ?? span.attributes['memvault.outcome'] ?? '';
  console.log(
    `  ${'  '.repeat(depth)}${span.name} ${String(status)} ${(span.duration[1] / 1e6 + span.duration[0] * 1e3).toFixed(2)}ms`,
  );
  for (const child of children(span)) print(child, depth + 1);
};
for (const root of spans.filter((s) => !s.parentSpanContext)) print(root, 0);

await vault.close();
await other.close();
await meterProvider.shutdown();
await tracerProvider.shutdown();
