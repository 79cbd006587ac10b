import { S3Client, type S3ClientConfig, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-s3';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import { countRequest } from '../accounting.js';

/**
 * The S3 client memvault builds when the host application does not hand in its own. Every choice
 * here is deliberate (and repeated in docs/s3.md); the host's own values win over ours.
 */

/**
 * Attempts per request, first try included. The SDK's "standard" strategy retries 500, 502, 503,
 * 504, throttling (503 SlowDown, 429, Throttling*), and transient network faults (ECONNRESET,
 * EPIPE, ETIMEDOUT, TimeoutError) with exponential backoff and full jitter, drawing from a retry
 * token bucket so that a failing backend is not hammered. Four attempts ride out a short brownout
 * (~0.1 + 0.2 + 0.4 s of base backoff) without making a command hang for long. 4xx answers (412,
 * 409 ConditionalRequestConflict, 403, 404) are not retried by the SDK: conflicts go back to the
 * vault, which re-reads before it tries again.
 */
export const DEFAULT_MAX_ATTEMPTS = 4;

/**
 * Timeouts per attempt. A connection that takes 3 s to open on a healthy network is dead; 30 s
 * bounds a whole request and response (memory files are small; an 8 MiB body needs well under a
 * second on a LAN) and throws TimeoutError, which the retry strategy above then retries. The socket
 * idle timeout catches a server that stops talking mid-response.
 */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 3_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_SOCKET_TIMEOUT_MS = 15_000;
/** Many users share one client; 64 sockets keep 64 concurrent commands from queueing on the agent. */
export const DEFAULT_MAX_SOCKETS = 64;

/** Name of the accounting middleware on the client's stack; used to add it at most once. */
export const ACCOUNTING_MIDDLEWARE_NAME = 'memvaultRequestAccounting';

export function defaultS3ClientConfig(): S3ClientConfig {
  const agent = { keepAlive: true, maxSockets: DEFAULT_MAX_SOCKETS };
  return {
    retryMode: 'standard',
    maxAttempts: DEFAULT_MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: DEFAULT_CONNECTION_TIMEOUT_MS,
      requestTimeout: DEFAULT_REQUEST_TIMEOUT_MS,
      // Without this the SDK only logs a warning when requestTimeout passes.
      throwOnRequestTimeout: true,
      socketTimeout: DEFAULT_SOCKET_TIMEOUT_MS,
      httpAgent: agent,
      httpsAgent: agent,
    },
    // Checksums only where the API demands one (DeleteObjects). The SDK's default since 2025
    // ('WHEN_SUPPORTED') adds a CRC32 to every upload and sends streamed bodies aws-chunked with a
    // trailing checksum, which S3-compatible servers support unevenly (Ceph RGW 16 accepted the
    // CRC32 header on a buffer, measured; chunked uploads are where servers differ). Upload
    // integrity instead comes from Content-MD5, which S3Store sets on every PutObject: every S3
    // implementation verifies it and answers 400 BadDigest on a mismatch.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    // Download side: validate a checksum when the server returns one (AWS stores a CRC64NVME for
    // every new object). Servers that return none (RGW 16) are simply not validated; S3Store then
    // still checks the received length against Content-Length, and the vault's authenticated
    // encryption rejects any altered byte.
    responseChecksumValidation: 'WHEN_SUPPORTED',
  };
}

/** Our defaults under the caller's config (caller wins, key by key). */
export function buildS3Client(config: S3ClientConfig = {}): S3Client {
  const merged: S3ClientConfig = { ...defaultS3ClientConfig(), ...config };
  // A custom endpoint (RGW, MinIO, R2) needs some region to sign with; AWS itself needs the real one.
  if (merged.region === undefined && merged.endpoint !== undefined && !process.env.AWS_REGION)
    merged.region = 'us-east-1';
  return new S3Client(merged);
}

const REQUEST_TYPES: Record<string, string> = {
  GetObjectCommand: 'GET',
  HeadObjectCommand: 'HEAD',
  PutObjectCommand: 'PUT',
  ListObjectsV2Command: 'LIST',
  CopyObjectCommand: 'COPY',
  DeleteObjectCommand: 'DELETE',
  DeleteObjectsCommand: 'DELETE_MANY',
  // Only when a metadata-replacing copy restates tags (see S3StoreOptions.restateTagsOnReplace).
  GetObjectTaggingCommand: 'GET_TAGGING',
  PutObjectTaggingCommand: 'PUT_TAGGING',
};

/** The accounting type of an S3 operation; operations memvault does not use keep their own name. */
export function requestTypeOf(commandName: string | undefined): string {
  if (!commandName) return 'OTHER';
  return REQUEST_TYPES[commandName] ?? commandName.replace(/Command$/, '');
}

/**
 * Adds the request-accounting middleware to a client, once. It sits in the finalizeRequest step
 * at low priority, i.e. inside the retry middleware (which is finalizeRequest, high priority): it
 * runs once per HTTP attempt, so requests the SDK retries are counted as the backend sees them.
 * `countRequest` finds the command's counter through async-local storage, which the SDK's promise
 * chain carries into the middleware.
 */
export function attachRequestAccounting(client: S3Client): void {
  const stack = client.middlewareStack;
  if (stack.identify().some((entry) => entry.startsWith(`${ACCOUNTING_MIDDLEWARE_NAME} `))) return;
  const middleware: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next, context) => (args) => {
    countRequest(requestTypeOf(context.commandName));
    return next(args);
  };
  stack.add(middleware, { step: 'finalizeRequest', priority: 'low', name: ACCOUNTING_MIDDLEWARE_NAME, override: true });
}
