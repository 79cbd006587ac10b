/**
 * Spans through @opentelemetry/api only. A span is made the active span while its work runs, so
 * memvault's own children and the host's instrumentation (the AWS SDK's spans, when the host enables
 * them) nest below it through the host's context manager. With no tracer provider registered the
 * work just runs: no span object, no context switch, no extra promise.
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { ATTRS, boundedCode, INSTRUMENTATION_SCOPE } from './names.js';

/** The API's no-op provider: what the global proxy delegates to while the host registered none. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();
/** Handed to work that runs untraced: every call on it is a no-op. */
const UNTRACED_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

let current: { delegate: TracerProvider; tracer: Tracer | undefined } | undefined;

/** memvault's tracer from the registered provider, or undefined when none is registered. */
export function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  if (current?.delegate !== delegate) {
    current = {
      delegate,
      tracer: delegate === NOOP_TRACER_PROVIDER ? undefined : delegate.getTracer(INSTRUMENTATION_SCOPE),
    };
  }
  return current.tracer;
}

/** The error code to report for a failure: a typed error's code, else INTERNAL. Never its message. */
export function codeOfError(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? boundedCode(code) : 'INTERNAL';
}

/** Marks a span failed with a code; the status message is the code, never an error message (it may hold a key). */
export function failSpan(span: Span, code: string): void {
  span.setAttribute(ATTRS.errorCode, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/**
 * Runs `work` in a new span, active while it runs. A throw marks the span failed with the error's
 * code and is rethrown; `work` sets the attributes of its own outcome. The span always ends.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  if (!tracer) return work(UNTRACED_SPAN);
  return traced(tracer, name, attributes, work);
}

async function traced<T>(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = context.active();
  const span = tracer.startSpan(name, { attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), work, undefined, span);
  } catch (error) {
    failSpan(span, codeOfError(error));
    throw error;
  } finally {
    span.end();
  }
}
