/**
 * Spans through @opentelemetry/api only. A span is made the active span while its work runs, so
 * memvault's own children and the host's instrumentation (the AWS SDK's spans, when the host enables
 * them) nest below it through the host's context manager. With no tracer provider the API returns
 * a non-recording span with an invalid context: then nothing is made active and the work just runs.
 */
import { context, isSpanContextValid, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { ATTRS, boundedCode, INSTRUMENTATION_SCOPE } from './names.js';

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
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = context.active();
  const span = trace.getTracer(INSTRUMENTATION_SCOPE).startSpan(name, { attributes }, parent);
  try {
    if (!isSpanContextValid(span.spanContext())) return await work(span);
    return await context.with(trace.setSpan(parent, span), work, undefined, span);
  } catch (error) {
    failSpan(span, codeOfError(error));
    throw error;
  } finally {
    span.end();
  }
}
