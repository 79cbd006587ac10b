/**
 * The bounds of one request, derived from the vault's own limits: the body a command can need (a file
 * of the vault's largest size, JSON-escaped), the nesting of its JSON, and how long it may take to
 * arrive. The body parser checks them before any work: invalid UTF-8 and deep JSON are refused in one
 * linear pass, before JSON.parse sees the text.
 */
import { DEFAULT_LIMITS } from '../tool/commands/env.js';
import { ProblemError } from './problems.js';

export interface ServeLimits {
  /** Largest request body in bytes (default: twice the vault's file size limit, plus 64 KiB for the rest of the command). */
  bodyBytes: number;
  /** Deepest JSON nesting a body may have (a tool input needs 2; default 32). */
  jsonDepth: number;
  /** Milliseconds a request may take to arrive, headers and body (slow senders are cut off; default 30 s). */
  requestTimeoutMs: number;
}

export function resolveLimits(
  given: Partial<ServeLimits> = {},
  maxFileBytes = DEFAULT_LIMITS.maxFileBytes,
): ServeLimits {
  const limits: ServeLimits = {
    bodyBytes: given.bodyBytes ?? 2 * maxFileBytes + 64 * 1024,
    jsonDepth: given.jsonDepth ?? 32,
    requestTimeoutMs: given.requestTimeoutMs ?? 30_000,
  };
  for (const [name, value] of Object.entries(limits))
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`serve limit ${name} must be a positive integer`);
  return limits;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The deepest nesting of JSON text, counted outside strings (one pass; malformed text is JSON.parse's to refuse). */
export function jsonDepthExceeds(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return false;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** A JSON body: strict UTF-8, nesting bounded, then parsed. Throws a ProblemError for each refusal. */
export function parseJsonBody(body: Buffer, maxDepth: number): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw new ProblemError('not-acceptable-body', 'The request body is not valid UTF-8.');
  }
  if (jsonDepthExceeds(body, maxDepth))
    throw new ProblemError('not-acceptable-body', `The request body's JSON is nested deeper than ${maxDepth} levels.`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProblemError('not-acceptable-body', 'The request body is not valid JSON.');
  }
}
