import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type CopyObjectCommandInput,
  type DeleteObjectCommandInput,
  type ListObjectsV2CommandInput,
  type PutObjectCommandInput,
  type S3ClientConfig,
  type Tag,
} from '@aws-sdk/client-s3';
import { MemvaultError } from '../errors.js';
import {
  PreconditionFailedError,
  type CopyOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from './port.js';
import { DELETE_BATCH_KEYS, MAX_STORE_KEY_BYTES } from './layout.js';
import { attachRequestAccounting, buildS3Client } from './s3/client.js';
import { describeS3Error, isConditionFailure, isMissingObject, storeUnavailable } from './s3/errors.js';
import { isS3Client } from './s3/settings.js';
import { parseS3Url } from './s3/url.js';

export {
  ACCOUNTING_MIDDLEWARE_NAME,
  attachRequestAccounting,
  buildS3Client,
  defaultS3ClientConfig,
} from './s3/client.js';
export { isS3Client, resolveS3Settings, s3ConfigFromEnv } from './s3/settings.js';
export { parseS3Url } from './s3/url.js';

/**
 * How the store enforces the conditions that not every S3 server honours: `If-None-Match: *` on
 * CopyObject (the destination must not exist), `x-amz-copy-source-if-match` (the source must still
 * be the version read) and `If-Match` on DeleteObject.
 *
 * - 'native': send the headers and trust the server to enforce them atomically. Right for AWS S3
 *   (CopyObject If-None-Match since 2024, conditional DeleteObject since 2025).
 * - 'check-first' (default): send the headers too, but first check the condition with a HEAD and
 *   fail fast. Ceph RGW 16 ignores all three headers (measured: a copy onto an existing key with
 *   If-None-Match succeeds; a stale x-amz-copy-source-if-match copies anyway, because RGW 16 reads
 *   `x-amz-copy-if-match` instead; a stale If-Match delete deletes). The check leaves a window of
 *   one round trip in which another writer can slip in; conditional PUTs, which carry every file
 *   edit, are enforced by the server itself and have no such window. Costs one HEAD per condition.
 */
export type ConditionChecks = 'native' | 'check-first';

export interface S3StoreOptions {
  /** `s3://bucket` or `s3://bucket/prefix`; every key is stored as `prefix/key`. */
  url: string;
  /** The host's own client (used as is, plus the accounting middleware), or a config for ours. */
  s3?: S3Client | S3ClientConfig;
  conditionChecks?: ConditionChecks;
  /**
   * Whether a copy that replaces metadata (the expiry "touch", a copy with new metadata) reads the
   * source's tags first (GetObjectTagging) and, when there are any, puts them back on the
   * destination after the copy (PutObjectTagging). Ceph RGW 16 drops every tag on a
   * MetadataDirective REPLACE copy and ignores TaggingDirective (measured), which would silently
   * take an object out of its tag-filtered lifecycle rule. Not atomic: a crash between the copy
   * and the tagging leaves the object untagged (the expiry sweeper still enforces the TTL). AWS
   * S3 keeps the tags itself (TaggingDirective COPY); set false there to save the requests.
   * Default true.
   */
  restateTagsOnReplace?: boolean;
}

/** ListObjectsV2 returns at most 1,000 keys per request; DeleteObjects takes at most 1,000 (layout.ts). */
const MAX_PAGE = DELETE_BATCH_KEYS;
/** S3's key limit (layout.ts), which the store prefix and its '/' share with the caller's key. */
const MAX_KEY_BYTES = MAX_STORE_KEY_BYTES;

function stripQuotes(etag: string | undefined): string {
  // ETags arrive quoted ("abc"); the port's tokens are bare because RGW rejects quoted If-Match.
  return (etag ?? '').replace(/^W\//, '').replaceAll('"', '');
}

/** URL-encode a key for x-amz-copy-source, keeping '/' (S3 expects the path form). */
function encodeCopySourceKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

function encodeTagging(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/**
 * The S3 adapter of the object-store port, on @aws-sdk/client-s3: AWS S3, Ceph RGW, MinIO, R2.
 * Conditional writes map to If-Match / If-None-Match; lost conditions become
 * PreconditionFailedError; every other failure becomes MemvaultError('STORE_UNAVAILABLE') with a
 * message free of bucket names, keys and credentials.
 */
export class S3Store implements ObjectStore {
  readonly kind = 's3';
  /** Only where the server enforces If-Match on DELETE itself (AWS); 'check-first' leaves a window. */
  get atomicConditionalDelete(): boolean {
    return this.conditionChecks === 'native';
  }
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly ownsClient: boolean;
  private readonly conditionChecks: ConditionChecks;
  private readonly restateTagsOnReplace: boolean;
  readonly client: S3Client;
  /** Longest key (UTF-8 bytes) this store can write: S3's 1,024 minus the prefix and its '/'. */
  readonly maxKeyBytes: number;

  constructor(options: S3StoreOptions) {
    const { bucket, prefix } = parseS3Url(options.url);
    this.bucket = bucket;
    this.prefix = prefix;
    this.conditionChecks = options.conditionChecks ?? 'check-first';
    this.restateTagsOnReplace = options.restateTagsOnReplace ?? true;
    this.maxKeyBytes = MAX_KEY_BYTES - (prefix === '' ? 0 : Buffer.byteLength(prefix, 'utf8') + 1);
    if (isS3Client(options.s3)) {
      this.client = options.s3;
      this.ownsClient = false;
    } else {
      this.client = buildS3Client(options.s3);
      this.ownsClient = true;
    }
    attachRequestAccounting(this.client);
  }

  async get(key: string): Promise<StoredObject | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
      if (!out.Body) throw new MemvaultError('STORE_UNAVAILABLE', 'S3 GetObject failed (no body)');
      const body = await out.Body.transformToByteArray();
      // A connection cut mid-body can surface as a short read rather than an error.
      if (out.ContentLength !== undefined && out.ContentLength !== body.byteLength) {
        throw new MemvaultError('STORE_UNAVAILABLE', 'S3 GetObject failed (body shorter than Content-Length)');
      }
      return {
        key,
        size: body.byteLength,
        etag: stripQuotes(out.ETag),
        lastModified: out.LastModified ?? new Date(0),
        body,
        metadata: { ...(out.Metadata ?? {}) },
      };
    } catch (error) {
      if (error instanceof MemvaultError) throw error;
      const f = describeS3Error(error);
      if (isMissingObject(f, 'GetObject')) return null;
      throw storeUnavailable('GetObject', f);
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const out = await this.headRaw(this.fullKey(key));
    return out && { key, size: out.size, etag: out.etag, lastModified: out.lastModified };
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    const input: PutObjectCommandInput = {
      Bucket: this.bucket,
      Key: this.writableKey(key),
      // A Buffer with a known length: RGW answers a streamed body without one with 411, and a
      // length-known buffer never goes out aws-chunked.
      Body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      ContentLength: body.byteLength,
      ContentMD5: createHash('md5').update(body).digest('base64'),
    };
    if (options.ifMatch !== undefined) input.IfMatch = options.ifMatch;
    if (options.ifNoneMatch !== undefined) input.IfNoneMatch = options.ifNoneMatch;
    if (options.metadata && Object.keys(options.metadata).length > 0) input.Metadata = options.metadata;
    if (options.tags && Object.keys(options.tags).length > 0) input.Tagging = encodeTagging(options.tags);
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    try {
      const out = await this.client.send(new PutObjectCommand(input));
      return { etag: stripQuotes(out.ETag) };
    } catch (error) {
      const f = describeS3Error(error);
      if (isConditionFailure(f, conditional)) throw new PreconditionFailedError(key);
      throw storeUnavailable('PutObject', f);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const maxKeys = Math.min(Math.max(Math.floor(options.maxKeys ?? MAX_PAGE), 1), MAX_PAGE);
    const input: ListObjectsV2CommandInput = { Bucket: this.bucket, Prefix: this.fullKey(prefix), MaxKeys: maxKeys };
    if (options.continuationToken !== undefined) input.ContinuationToken = options.continuationToken;
    else if (options.startAfter !== undefined) input.StartAfter = this.fullKey(options.startAfter);
    try {
      const out = await this.client.send(new ListObjectsV2Command(input));
      const objects: ObjectInfo[] = (out.Contents ?? []).map((o) => ({
        key: this.localKey(o.Key ?? ''),
        size: o.Size ?? 0,
        etag: stripQuotes(o.ETag),
        // LIST reports milliseconds (RGW) while GET and HEAD carry an HTTP date in whole seconds;
        // truncating makes the three agree (AWS lists whole seconds anyway).
        lastModified: new Date(Math.floor((o.LastModified?.getTime() ?? 0) / 1000) * 1000),
      }));
      // Some servers set IsTruncated with no token on the last page; trust the token only.
      return out.IsTruncated && out.NextContinuationToken
        ? { objects, continuationToken: out.NextContinuationToken }
        : { objects };
    } catch (error) {
      throw storeUnavailable('ListObjectsV2', describeS3Error(error));
    }
  }

  async copy(sourceKey: string, destinationKey: string, options: CopyOptions = {}): Promise<{ etag: string }> {
    const source = this.fullKey(sourceKey);
    const destination = this.writableKey(destinationKey);
    const input: CopyObjectCommandInput = {
      Bucket: this.bucket,
      Key: destination,
      CopySource: `${this.bucket}/${encodeCopySourceKey(source)}`,
      TaggingDirective: 'COPY',
    };
    if (options.ifNoneMatch !== undefined) input.IfNoneMatch = options.ifNoneMatch;
    if (options.ifSourceMatch !== undefined) input.CopySourceIfMatch = options.ifSourceMatch;
    if (options.metadata !== undefined) {
      input.MetadataDirective = 'REPLACE';
      input.Metadata = options.metadata;
    } else if (source === destination) {
      // S3 refuses a copy onto itself that changes nothing; an in-place copy (the expiry "touch")
      // therefore restates the current metadata. One HEAD; callers that pass metadata avoid it.
      const current = await this.headRaw(source);
      if (!current) throw new MemvaultError('NOT_FOUND', 'copy source does not exist');
      input.MetadataDirective = 'REPLACE';
      input.Metadata = current.metadata;
    }

    const restateTags =
      input.MetadataDirective === 'REPLACE' && this.restateTagsOnReplace ? await this.tagsOf(source) : [];

    if (this.conditionChecks === 'check-first') {
      if (options.ifSourceMatch !== undefined) {
        const current = await this.headRaw(source);
        if (!current || current.etag !== options.ifSourceMatch) throw new PreconditionFailedError(sourceKey);
      }
      if (options.ifNoneMatch === '*' && (await this.headRaw(destination)))
        throw new PreconditionFailedError(destinationKey);
    }

    try {
      const out = await this.client.send(new CopyObjectCommand(input));
      if (restateTags.length > 0) {
        await this.client.send(
          new PutObjectTaggingCommand({ Bucket: this.bucket, Key: destination, Tagging: { TagSet: restateTags } }),
        );
      }
      return { etag: stripQuotes(out.CopyObjectResult?.ETag) };
    } catch (error) {
      const f = describeS3Error(error);
      if (f.code === 'NoSuchKey') {
        // The source vanished: with an expected source version that is a lost condition.
        if (options.ifSourceMatch !== undefined) throw new PreconditionFailedError(sourceKey);
        throw new MemvaultError('NOT_FOUND', 'copy source does not exist');
      }
      if (isConditionFailure(f, options.ifNoneMatch !== undefined || options.ifSourceMatch !== undefined)) {
        throw new PreconditionFailedError(destinationKey);
      }
      throw storeUnavailable('CopyObject', f);
    }
  }

  async delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    const fullKey = this.fullKey(key);
    const input: DeleteObjectCommandInput = { Bucket: this.bucket, Key: fullKey };
    if (options.ifMatch !== undefined) {
      if (this.conditionChecks === 'check-first') {
        const current = await this.headRaw(fullKey);
        // Deleting a missing key is not an error (S3 semantics), conditional or not.
        if (!current) return;
        if (current.etag !== options.ifMatch) throw new PreconditionFailedError(key);
      }
      input.IfMatch = options.ifMatch;
    }
    try {
      await this.client.send(new DeleteObjectCommand(input));
    } catch (error) {
      const f = describeS3Error(error);
      // AWS answers a conditional delete of a missing key with 404; the port says that is fine.
      if (f.status === 404 && f.code !== 'NoSuchBucket') return;
      if (isConditionFailure(f, options.ifMatch !== undefined)) throw new PreconditionFailedError(key);
      throw storeUnavailable('DeleteObject', f);
    }
  }

  async deleteMany(keys: string[]): Promise<{ failed: string[] }> {
    const failed: string[] = [];
    for (let start = 0; start < keys.length; start += MAX_PAGE) {
      const batch = keys.slice(start, start + MAX_PAGE);
      try {
        const out = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            // Quiet: the answer lists only the failures, not 1,000 successes.
            Delete: { Objects: batch.map((key) => ({ Key: this.fullKey(key) })), Quiet: true },
          }),
        );
        for (const e of out.Errors ?? []) if (e.Key !== undefined) failed.push(this.localKey(e.Key));
      } catch (error) {
        throw storeUnavailable('DeleteObjects', describeS3Error(error));
      }
    }
    return { failed };
  }

  /** GetObjectTagging (counted as the client's request); undefined for a missing object or none. */
  async readTags(key: string): Promise<Record<string, string> | undefined> {
    const tags = await this.tagsOf(this.fullKey(key));
    return tags.length === 0 ? undefined : Object.fromEntries(tags.map((t) => [t.Key ?? '', t.Value ?? '']));
  }

  async close(): Promise<void> {
    // A client handed in by the host is the host's to close.
    if (this.ownsClient) this.client.destroy();
  }

  private fullKey(key: string): string {
    return this.prefix === '' ? key : `${this.prefix}/${key}`;
  }

  /** For writes: S3 refuses keys over 1,024 bytes with a 400 that would read as an outage. */
  private writableKey(key: string): string {
    const fullKey = this.fullKey(key);
    if (Buffer.byteLength(fullKey, 'utf8') > MAX_KEY_BYTES) {
      throw new MemvaultError('INVALID_PATH', 'The path is too long for the store.');
    }
    return fullKey;
  }

  private localKey(fullKey: string): string {
    return this.prefix === '' ? fullKey : fullKey.slice(this.prefix.length + 1);
  }

  /** The object's tags (none for a missing object: the copy itself reports that). */
  private async tagsOf(fullKey: string): Promise<Tag[]> {
    try {
      const out = await this.client.send(new GetObjectTaggingCommand({ Bucket: this.bucket, Key: fullKey }));
      return out.TagSet ?? [];
    } catch (error) {
      const f = describeS3Error(error);
      if (f.code === 'NoSuchKey') return [];
      throw storeUnavailable('GetObjectTagging', f);
    }
  }

  private async headRaw(fullKey: string): Promise<(ObjectInfo & { metadata: Record<string, string> }) | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: fullKey }));
      return {
        key: this.localKey(fullKey),
        size: out.ContentLength ?? 0,
        etag: stripQuotes(out.ETag),
        lastModified: out.LastModified ?? new Date(0),
        metadata: { ...(out.Metadata ?? {}) },
      };
    } catch (error) {
      const f = describeS3Error(error);
      if (isMissingObject(f, 'HeadObject')) return null;
      throw storeUnavailable('HeadObject', f);
    }
  }
}

/** `createS3Store({ url: 's3://bucket/prefix', s3: clientOrConfig })`. */
export function createS3Store(options: S3StoreOptions): S3Store {
  return new S3Store(options);
}
