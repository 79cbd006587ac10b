/**
 * An in-memory OpenTelemetry setup, as a host would register it: a meter provider whose reader
 * exports to an InMemoryMetricExporter (delta temporality, so each collect() returns what moved
 * since the previous one), a tracer provider exporting to an InMemorySpanExporter, and an
 * AsyncLocalStorage context manager (what the Node SDK registers) so that active spans propagate.
 * Used by the tests, bench/telemetry.ts and scripts/telemetry-example.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  context,
  metrics,
  ROOT_CONTEXT,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
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

/** The context manager the Node SDK registers (@opentelemetry/context-async-hooks), in a few lines. */
export class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]): unknown =>
      this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

export interface Point {
  name: string;
  unit: string;
  attributes: Attributes;
  /** Counter: the sum; histogram: the count of recordings. */
  value: number;
  /** Histogram only: the sum of the recorded values. */
  sum?: number;
}

export interface InMemoryTelemetry {
  /** Metric points recorded since the previous call (delta temporality). */
  collect(): Promise<Point[]>;
  /** Ended spans so far. */
  spans(): ReadableSpan[];
  resetSpans(): void;
  shutdown(): Promise<void>;
}

export function registerInMemoryTelemetry(): InMemoryTelemetry {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 24 * 3600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const contextManager = new AsyncLocalContextManager();
  context.setGlobalContextManager(contextManager);
  metrics.setGlobalMeterProvider(meterProvider);
  trace.setGlobalTracerProvider(tracerProvider);
  return {
    async collect() {
      await reader.forceFlush();
      const points: Point[] = [];
      for (const resource of metricExporter.getMetrics()) {
        for (const scope of resource.scopeMetrics) {
          for (const metric of scope.metrics) {
            for (const dp of metric.dataPoints) {
              const base = { name: metric.descriptor.name, unit: metric.descriptor.unit, attributes: dp.attributes };
              if (metric.dataPointType === DataPointType.HISTOGRAM) {
                const h = dp.value as { count: number; sum?: number };
                if (h.count > 0) points.push({ ...base, value: h.count, sum: h.sum ?? 0 });
              } else if (typeof dp.value === 'number' && dp.value !== 0) {
                points.push({ ...base, value: dp.value });
              }
            }
          }
        }
      }
      metricExporter.reset();
      return points;
    },
    spans: () => spanExporter.getFinishedSpans(),
    resetSpans: () => spanExporter.reset(),
    async shutdown() {
      metrics.disable();
      trace.disable();
      context.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

/** Sum of the points of a metric whose attributes include `match`. */
export function total(points: readonly Point[], name: string, match: Attributes = {}): number {
  return points
    .filter((p) => p.name === name && Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + p.value, 0);
}
