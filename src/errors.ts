/**
 * Typed errors with stable codes. A `MemvaultError` carries the exact text the model reads
 * (`message`) and a machine code for logs, audit records and metrics. Anything that is not a
 * MemvaultError is an internal fault: callers turn it into a generic message so that host paths,
 * stack traces and keys never reach the model.
 */
export type ErrorCode =
  | 'INVALID_INPUT' // malformed command object: missing or mistyped field, unknown command
  | 'INVALID_PATH' // rejected by the path guard
  | 'INVALID_USER' // empty or absurd user id (a host application bug, not the model's)
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'NOT_A_FILE'
  | 'NOT_A_DIRECTORY'
  | 'NO_MATCH' // str_replace: old_str not found
  | 'AMBIGUOUS_MATCH' // str_replace: several matches
  | 'INVALID_RANGE' // view_range / insert_line out of range
  | 'UNSUPPORTED_CONTENT' // binary content that is not a supported image
  | 'TOO_LARGE' // file over the line limit or a size cap
  | 'QUOTA_EXCEEDED'
  | 'PII_REJECTED'
  | 'CONFLICT' // too many concurrent writers; retry budget spent
  | 'PRECONDITION_FAILED' // store level: a conditional write lost
  | 'VERSION_MISMATCH' // the caller's precondition (vault.run's ifMatch / ifNoneMatch) did not hold: nothing changed
  | 'ABORTED' // the host's signal (vault.run's signal) fired before the command wrote anything: nothing changed
  | 'PAUSED' // the person paused their memory: the model's writes are refused, reads still work
  | 'STORE_UNAVAILABLE' // store level: the backend failed after retries
  | 'INTEGRITY' // ciphertext failed to open: tampered, moved or wrong key
  | 'KEY_UNAVAILABLE' // master key / KMS problem
  | 'CONFIG' // bad configuration at start-up
  | 'STORE_INCONSISTENT' // the store holds data its records do not account for (e.g. user data, no deployment record)
  | 'INTERNAL';

export class MemvaultError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MemvaultError';
    this.code = code;
  }
}

export function isMemvaultError(e: unknown, code?: ErrorCode): e is MemvaultError {
  return e instanceof MemvaultError && (code === undefined || e.code === code);
}

/** The text shown to the model for an unexpected fault: nothing of the fault itself. */
export const INTERNAL_ERROR_MESSAGE =
  'Error: The memory store failed to complete this command. Nothing was changed; please try again.';

const ERROR_NAME = /^[A-Za-z][\w.]{0,63}$/;
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,47}$/;

/**
 * What a log line may show of an error: its class name and code, both bounded, and nothing else. A
 * message, stack or cause can hold a key, an ARN, a host path or a user's data, so none is copied.
 * The one serializer for errors in memvault's own logs.
 */
export function loggableError(error: unknown): { name: string; code?: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  const name = ERROR_NAME.test(error.name) ? error.name : 'Error';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && ERROR_CODE.test(code) ? { name, code } : { name };
}
