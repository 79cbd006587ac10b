import { MemvaultError } from '../../errors.js';

/**
 * What an S3 failure means to the store. The SDK has already retried what its retry strategy
 * covers (5xx, throttling, timeouts, connection resets) by the time an error reaches here.
 */
export interface S3Failure {
  status: number | undefined;
  /** The S3 error code (NoSuchKey, PreconditionFailed, ...) or the Node error code (ECONNRESET). */
  code: string;
  message: string;
  /**
   * Set when the request got no HTTP answer for a network-level cause (connection refused, host
   * not found, a timeout): what doctor names as the reason a check could not be made.
   */
  network?: string;
}

interface ErrorShape {
  name?: unknown;
  Code?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: { code?: unknown };
  errors?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $response?: { statusCode?: unknown };
}

const NETWORK_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
};

/** The errno of a failed connection: on the error, its cause, or one of an AggregateError's attempts (IPv4 and IPv6). */
function errnoOf(e: ErrorShape): string | undefined {
  const attempts = Array.isArray(e.errors) ? (e.errors as Array<{ code?: unknown } | null>) : [];
  const found = [e.code, e.cause?.code, ...attempts.map((a) => a?.code)].find(
    (v) => typeof v === 'string' && /^[A-Z][A-Z0-9_]+$/.test(v),
  );
  return found as string | undefined;
}

/** What an S3 failure is, for the store and for doctor alike. */
export function describeS3Error(error: unknown): S3Failure {
  const e = (typeof error === 'object' && error !== null ? error : {}) as ErrorShape;
  const statusValue = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  const status = typeof statusValue === 'number' ? statusValue : undefined;
  const codeValue = [e.Code, e.name, e.code].find((v) => typeof v === 'string' && v !== '' && v !== 'Error');
  const failure: S3Failure = {
    status,
    code: typeof codeValue === 'string' ? codeValue : 'UnknownError',
    message: typeof e.message === 'string' ? e.message : '',
  };
  if (status === undefined) {
    const errno = errnoOf(e);
    if (errno !== undefined) failure.network = `${NETWORK_CAUSES[errno] ?? 'no answer'} (${errno})`;
    else if (failure.code === 'TimeoutError' || failure.code === 'RequestTimeout')
      failure.network = 'request timed out';
  }
  return failure;
}

/** 404 for an object: GetObject says NoSuchKey; HeadObject has no body, so only the status. */
export function isMissingObject(
  f: S3Failure,
  operation: 'GetObject' | 'HeadObject' | 'DeleteObject' | 'CopyObject',
): boolean {
  if (f.code === 'NoSuchKey') return true;
  // A missing bucket is a configuration fault, not an absent object; HEAD cannot tell them apart.
  return operation === 'HeadObject' && f.status === 404 && f.code !== 'NoSuchBucket';
}

/**
 * A lost conditional write. 412 PreconditionFailed everywhere; 409 ConditionalRequestConflict is
 * AWS's answer when a concurrent write to the key won during ours; AWS answers If-Match on a
 * missing key with 404 NoSuchKey (RGW with 412). Ceph RGW 16 answers some conditional puts under
 * heavy races with 500 (measured: 72 of 500 racing If-Match puts): its log shows op status -125
 * (ECANCELED, "the object changed under us"), which it has no S3 code for, so the wire carries
 * the code UnknownError. That is a conflict, but only on a conditional request, where a fresh read
 * and retry is the right response anyway; AWS's own 500s carry InternalError and stay outages.
 * A 500 on an unconditional request always stays a real error.
 */
export function isConditionFailure(f: S3Failure, conditional: boolean): boolean {
  // Only a request that carried a condition can lose one. A 412 or 409 answered to an unconditional
  // request is not a cue to re-read (its callers expect no PreconditionFailedError and would report
  // an internal fault); it is an unexpected answer, i.e. a store failure.
  if (!conditional) return false;
  if (f.status === 412 || f.code === 'PreconditionFailed') return true;
  if (f.code === 'ConditionalRequestConflict') return true;
  if (f.status === 409) return true;
  if (f.code === 'NoSuchKey') return true;
  return f.status === 500 && (f.code === 'UnknownError' || /ECANCELED/i.test(`${f.code} ${f.message}`));
}

/**
 * The error every other failure becomes. The message names the operation, the HTTP status and
 * the S3 error code, never the bucket, a key, an endpoint or credentials (it may reach logs and
 * the audit trail); the original error is not attached as `cause` for the same reason (SDK errors
 * carry the request, bucket names and keys).
 */
export function storeUnavailable(operation: string, f: S3Failure): MemvaultError {
  const status = f.status === undefined ? 'no response' : `HTTP ${f.status}`;
  // Codes are identifiers that start with a capital (NoSuchBucket, AccessDenied, ECONNRESET,
  // UND_ERR_SOCKET); anything else is dropped. A bucket name (lowercase by S3's rules) or a host name
  // that some layer put where the code belongs is never one.
  const code =
    /^[A-Z][A-Za-z0-9_.]{0,63}$/.test(f.code) && !/amazonaws|\.com\b/i.test(f.code) ? f.code : 'UnknownError';
  return new MemvaultError('STORE_UNAVAILABLE', `S3 ${operation} failed (${status}, ${code})`);
}
