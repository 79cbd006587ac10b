/**
 * Errors of the HTTP layer as RFC 9457 problem details (`application/problem+json`): a stable `type`
 * per kind, a fixed title, a detail written here (never an exception's message, stack or a host path).
 */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Every problem the service answers with: its HTTP status and title. The `type` is `urn:memvault:problem:<name>`. */
export const PROBLEMS = {
  unauthorized: { status: 401, title: 'Missing or invalid credential' },
  forbidden: { status: 403, title: 'The credential may not do this' },
  'not-found': { status: 404, title: 'No such resource' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'not-acceptable-body': { status: 400, title: 'The request body is not acceptable' },
  'invalid-request': { status: 400, title: 'The request is not valid' },
  'precondition-failed': { status: 412, title: 'The precondition did not hold' },
  conflict: { status: 409, title: 'Too many concurrent changes of this file' },
  refused: { status: 422, title: 'The vault refused the change' },
  'precondition-required': { status: 428, title: 'A precondition is required' },
  'body-too-large': { status: 413, title: 'The request body is too large' },
  'unsupported-media-type': { status: 415, title: 'The request body must be JSON' },
  'idempotency-key-reused': { status: 422, title: 'The idempotency key was used with another request' },
  'idempotency-in-progress': { status: 409, title: 'A request with this idempotency key is still running' },
  'idempotency-record-unreadable': { status: 422, title: 'The first result of this idempotency key cannot be read' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'request-timeout': { status: 408, title: 'The request took too long to arrive' },
  'shutting-down': { status: 503, title: 'The service is shutting down' },
  unavailable: { status: 503, title: 'The service cannot reach its store' },
  'key-unavailable': { status: 503, title: 'The service cannot open its key' },
  internal: { status: 500, title: 'The service failed to complete the request' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemName = keyof typeof PROBLEMS;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

export function problemType(name: ProblemName): string {
  return `urn:memvault:problem:${name}`;
}

export function problem(name: ProblemName, detail: string): Problem {
  const { status, title } = PROBLEMS[name];
  return { type: problemType(name), title, status, detail };
}

/** Thrown by the service's own code; the error handler answers it as its problem. */
export class ProblemError extends Error {
  readonly problem: Problem;
  /** Extra response headers (WWW-Authenticate, Retry-After). */
  readonly headers: Record<string, string>;
  constructor(name: ProblemName, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.name = 'ProblemError';
    this.problem = problem(name, detail);
    this.headers = headers;
  }
}

/** Fastify's own errors (its codes are stable) mapped to problems; anything else is internal. */
export function problemOfFrameworkError(error: { code?: unknown; statusCode?: unknown }): Problem {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('body-too-large', 'The request body is larger than this service accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem('unsupported-media-type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problem('not-acceptable-body', 'The request body is not valid JSON.');
    case 'FST_ERR_VALIDATION':
      return problem('invalid-request', 'A parameter, header or the body does not match the API description.');
    case 'FST_ERR_NOT_FOUND':
      return problem('not-found', 'No such resource.');
    default:
      break;
  }
  if (error.statusCode === 408) return problem('request-timeout', 'The request took too long to arrive.');
  if (error.statusCode === 413)
    return problem('body-too-large', 'The request body is larger than this service accepts.');
  if (error.statusCode === 415) return problem('unsupported-media-type', 'Send the body as application/json.');
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500)
    return problem('invalid-request', 'The request is not valid.');
  return problem('internal', 'The request failed; nothing of it is reported here. Retry it, or see the service logs.');
}
