/**
 * How the sweeper deletes a batch of expired files without deleting a newer version written (or
 * touched) after its listing. Three strategies, chosen by what the store can enforce:
 *
 * - `store` (memory and file stores): `delete(key, { ifMatch })` per file. Both adapters check the
 *   condition under the key's lock and give every write and every copy a new ETag, so the check is
 *   atomic and catches writes and touches alike. One DELETE per file (local, no request bill).
 * - `s3-native` (AWS S3 general purpose buckets, conditional deletes since 2025): one DeleteObjects
 *   per 1,000 files, each ObjectIdentifier carrying the listed ETag; S3 deletes only objects whose
 *   current ETag still matches and reports the others as PreconditionFailed. An S3 ETag is the MD5
 *   of the bytes, so it changes on every memvault write of new ciphertext (random nonce) but NOT on a
 *   touch (a copy of the same bytes): touches are kept safe by the hidden/grace design in decide.ts.
 * - `s3-recheck` (servers that ignore conditions on DELETE and DeleteObjects; Ceph RGW 16 deletes
 *   regardless, measured): each candidate is first fenced, i.e. replaced by an empty "expired"
 *   marker (src/store/fence.ts) with a PutObject `If-Match` the listed ETag, a condition RGW does
 *   enforce. A file re-created, edited or touched after the listing has another ETag, so its fence
 *   loses (412) and it is kept; a write that comes after the fence finds a marker, which a vault
 *   reads as no file (an edit then fails its own If-Match; a create replaces the marker If-Match).
 *   The marker is then reaped (src/store/fence.ts): replaced `If-Match` by a reaping marker of its
 *   own ETag, then deleted; a create over the marker that landed first makes that PUT fail and
 *   stays, one that comes later waits for the DELETE (no HEAD-then-DELETE window is left).
 *   A HEAD before the fence also keeps a file touched since the listing (a touch keeps
 *   the ETag). Four requests per deleted file (HEAD, PUT, PUT, DELETE).
 */
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3ClientLike } from '../store/s3/client-shape.js';
import { createHash } from 'node:crypto';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { forEachLimit } from '../util/concurrency.js';
import { MARKER_BODY, markerMetadata, newFenceId, reap } from '../store/fence.js';

export interface ExpiryCandidate {
  key: string;
  uid: string;
  etag: string;
  lastModified: Date;
  size: number;
}

export interface DeleteOutcome {
  deleted: ExpiryCandidate[];
  /** Written or touched since the listing: kept. */
  changed: ExpiryCandidate[];
  /** Already gone (another sweeper, an erasure, the lifecycle rule). */
  gone: ExpiryCandidate[];
  failed: ExpiryCandidate[];
}

export type DeleteMode = 'store' | 's3-native' | 's3-recheck';

export interface ConditionalDeleter {
  readonly mode: DeleteMode;
  /** Candidates handed over per call. */
  readonly batchSize: number;
  deleteUnchanged(batch: ExpiryCandidate[]): Promise<DeleteOutcome>;
}

function emptyOutcome(): DeleteOutcome {
  return { deleted: [], changed: [], gone: [], failed: [] };
}

const STORE_DELETE_CONCURRENCY = 8;

export function storeDeleter(store: ObjectStore): ConditionalDeleter {
  return {
    mode: 'store',
    batchSize: 1000,
    async deleteUnchanged(batch) {
      const outcome = emptyOutcome();
      await forEachLimit(batch, STORE_DELETE_CONCURRENCY, async (candidate) => {
        try {
          await store.delete(candidate.key, { ifMatch: candidate.etag });
          outcome.deleted.push(candidate);
        } catch (error) {
          (error instanceof PreconditionFailedError ? outcome.changed : outcome.failed).push(candidate);
        }
      });
      return outcome;
    },
  };
}

export interface S3DeleterOptions {
  /** The S3 store's client (by shape in this public type: src/store/s3/client-shape.ts). */
  client: S3ClientLike;
  bucket: string;
  /** The store's key prefix ('' for none), as in `s3://bucket/prefix`. */
  prefix: string;
  mode: 'native' | 'recheck';
}

/** DeleteObjects takes at most 1,000 keys. */
import { DELETE_BATCH_KEYS as NATIVE_BATCH } from '../store/layout.js';
/** Small batches keep the HEAD-to-delete window short where the server cannot check the ETag itself. */
const RECHECK_BATCH = 100;
const HEAD_CONCURRENCY = 16;

function bare(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replaceAll('"', '');
}

function status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

export function s3Deleter(options: S3DeleterOptions): ConditionalDeleter {
  const { bucket, prefix, mode } = options;
  const client = options.client as unknown as S3Client;
  const fullKey = (key: string): string => (prefix === '' ? key : `${prefix}/${key}`);
  // The S3 commands are loaded when a sweep first deletes, so that importing the sweeper (the
  // package root does, for vault.expire) never loads the AWS SDK for a file store.
  let sdk: Promise<typeof S3Sdk> | undefined;
  const commands = (): Promise<typeof S3Sdk> => (sdk ??= import('@aws-sdk/client-s3'));

  /** The ETag of every marker (an empty body): S3 ETags of single-part objects are the body's MD5. */
  const markerEtag = createHash('md5').update(MARKER_BODY).digest('hex');
  const headOf = async (
    key: string,
  ): Promise<{ etag: string; size: number; lastModified: number | undefined } | null> => {
    const { HeadObjectCommand } = await commands();
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: fullKey(key) }));
      return { etag: bare(head.ETag), size: head.ContentLength ?? 0, lastModified: head.LastModified?.getTime() };
    } catch (error) {
      if (status(error) === 404) return null;
      throw error;
    }
  };

  /** Fence, then clean up (see the module comment). */
  const fenceThenDelete = async (batch: ExpiryCandidate[], outcome: DeleteOutcome): Promise<void> => {
    const op = newFenceId();
    await forEachLimit(batch, HEAD_CONCURRENCY, async (candidate) => {
      const { PutObjectCommand, DeleteObjectCommand } = await commands();
      try {
        // A touch (a copy onto itself) keeps the ETag, so the fence's If-Match cannot see it; its
        // LastModified can (LIST times are truncated to whole seconds by S3Store, as HEAD reports
        // them). Touches of hidden files do not happen (reads skip them; decide.ts's grace), so this
        // check only narrows what the grace already covers; writes are caught by the fence itself.
        const before = await headOf(candidate.key);
        if (before === null) {
          outcome.gone.push(candidate);
          return;
        }
        if (before.etag !== candidate.etag || before.lastModified !== candidate.lastModified.getTime()) {
          outcome.changed.push(candidate);
          return;
        }
        try {
          await client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: fullKey(candidate.key),
              Body: Buffer.from(MARKER_BODY),
              ContentLength: 0,
              IfMatch: candidate.etag,
              Metadata: markerMetadata('expired', op),
            }),
          );
        } catch (error) {
          const code = status(error);
          // 412 (RGW, AWS), 409 (AWS: a concurrent write won), 404 (AWS: If-Match on a missing key),
          // 500 (RGW under races: the object changed under the write). Look what is there now.
          if (code !== 412 && code !== 409 && code !== 404 && code !== 500) throw error;
          const now = await headOf(candidate.key);
          if (now === null) outcome.gone.push(candidate);
          else if (now.etag === candidate.etag)
            outcome.failed.push(candidate); // not fenced: next sweep
          else if (!(now.size === 0 && now.etag === markerEtag)) outcome.changed.push(candidate);
          else outcome.gone.push(candidate); // fenced already (our lost answer, or another operation's)
          if (now === null || !(now.size === 0 && now.etag === markerEtag)) return;
        }
        if (!outcome.gone.includes(candidate)) outcome.deleted.push(candidate);
        // Clean-up: only while the marker is still there (a file created over it since stays). Not
        // a HEAD and a DELETE (a create over the marker in between would be deleted): the marker is
        // reaped (src/store/fence.ts), replaced `If-Match` by one of its own ETag, then deleted; a
        // create that came first makes that PUT fail, one that comes later waits for the DELETE.
        await reap(
          {
            replaceIfMatch: async (body, ifMatch, metadata) =>
              void (await client.send(
                new PutObjectCommand({
                  Bucket: bucket,
                  Key: fullKey(candidate.key),
                  Body: Buffer.from(body),
                  ContentLength: body.byteLength,
                  IfMatch: ifMatch,
                  Metadata: metadata,
                }),
              )),
            deleteUnconditionally: async () =>
              void (await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: fullKey(candidate.key) }))),
          },
          markerEtag,
          op,
        ).catch(() => undefined); // a lost PUT: a file created over the marker since stays (the marker it replaced is gone); a stall leaves the marker for the next sweep
      } catch {
        if (!outcome.deleted.includes(candidate) && !outcome.gone.includes(candidate)) outcome.failed.push(candidate);
      }
    });
  };

  return {
    mode: mode === 'native' ? 's3-native' : 's3-recheck',
    batchSize: mode === 'native' ? NATIVE_BATCH : RECHECK_BATCH,
    async deleteUnchanged(batch) {
      const outcome = emptyOutcome();
      if (mode === 'recheck') {
        await fenceThenDelete(batch, outcome);
        return outcome;
      }
      const toDelete = batch;
      const byKey = new Map(toDelete.map((c) => [fullKey(c.key), c]));
      const { DeleteObjectsCommand } = await commands();
      try {
        const out = await client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            // The ETag makes the delete conditional where the server supports it (AWS); RGW 16 ignores it.
            Delete: { Objects: toDelete.map((c) => ({ Key: fullKey(c.key), ETag: `"${c.etag}"` })), Quiet: true },
          }),
        );
        const notDeleted = new Set<string>();
        for (const error of out.Errors ?? []) {
          const candidate = error.Key !== undefined ? byKey.get(error.Key) : undefined;
          if (!candidate) continue;
          notDeleted.add(error.Key!);
          if (error.Code === 'PreconditionFailed' || error.Code === 'ConditionalRequestConflict')
            outcome.changed.push(candidate);
          else if (error.Code === 'NoSuchKey') outcome.gone.push(candidate);
          else outcome.failed.push(candidate);
        }
        for (const [key, candidate] of byKey) if (!notDeleted.has(key)) outcome.deleted.push(candidate);
      } catch {
        outcome.failed.push(...toDelete);
      }
      return outcome;
    },
  };
}
