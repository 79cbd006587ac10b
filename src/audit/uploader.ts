import { PreconditionFailedError, type ObjectStore } from '../store/port.js';

/**
 * Shipping sealed segments off the machine. A segment is uploaded once, create-only
 * (`If-None-Match: *`), under `audit/{instanceId}/{firstSeq, 12 digits}.jsonl`: zero-padding makes
 * the store's lexicographic listing the chain's order, and create-only means a second upload of
 * the same segment (a retry, a restart) can never overwrite what is there.
 */
export interface SegmentUploader {
  /** True when the uploader can set Object Lock retention (an S3 bucket with Object Lock enabled). */
  readonly supportsRetention: boolean;
  /** 'exists' when an object is already at the key (an earlier upload of the same segment, or not). */
  upload(key: string, body: Uint8Array, retention?: SegmentRetention): Promise<'uploaded' | 'exists'>;
  /**
   * Whether the object at `key` is exactly `body`, reading at most `body.byteLength + 1` bytes of it.
   * The shipper asks after an 'exists': a key another writer filled (a reused instance id) must not
   * count as this segment shipped. An uploader without it cannot answer 'exists' (fail closed).
   */
  holds?(key: string, body: Uint8Array): Promise<boolean>;
}

export type ObjectLockMode = 'GOVERNANCE' | 'COMPLIANCE';

/** Configuration: lock each segment for `days` after its upload. */
export interface ObjectLockRetention {
  mode: ObjectLockMode;
  days: number;
}

/** One upload's retention: the mode and the date until which the object cannot be deleted or overwritten. */
export interface SegmentRetention {
  mode: ObjectLockMode;
  retainUntil: Date;
}

export { AUDIT_KEY_PREFIX } from '../store/layout.js';
import { AUDIT_KEY_PREFIX } from '../store/layout.js';

export function segmentKey(instanceId: string, firstSeq: number, prefix = ''): string {
  return `${prefix}${AUDIT_KEY_PREFIX}${instanceId}/${String(firstSeq).padStart(12, '0')}.jsonl`;
}

/** Parses a key written by `segmentKey`; undefined for anything else under the prefix. */
export function parseSegmentKey(key: string, prefix = ''): { instanceId: string; firstSeq: number } | undefined {
  if (!key.startsWith(prefix + AUDIT_KEY_PREFIX)) return undefined;
  const match = /^([A-Za-z0-9._-]{1,64})\/(\d{12,})\.jsonl$/.exec(key.slice(prefix.length + AUDIT_KEY_PREFIX.length));
  if (!match?.[1] || !match[2]) return undefined;
  return { instanceId: match[1], firstSeq: Number(match[2]) };
}

/**
 * Uploads through the ObjectStore port (any adapter: file, memory, S3 without Object Lock).
 * The port has no retention parameter, so this uploader refuses a retention date rather than
 * silently storing an unlocked copy: the writer checks `supportsRetention` at start-up.
 */
export class ObjectStoreSegmentUploader implements SegmentUploader {
  readonly supportsRetention = false;
  constructor(private readonly store: ObjectStore) {}

  async upload(key: string, body: Uint8Array, retention?: SegmentRetention): Promise<'uploaded' | 'exists'> {
    if (retention) throw new Error('this uploader cannot set Object Lock retention');
    try {
      await this.store.put(key, body, { ifNoneMatch: '*' });
      return 'uploaded';
    } catch (error) {
      if (error instanceof PreconditionFailedError) return 'exists';
      throw error;
    }
  }

  async holds(key: string, body: Uint8Array): Promise<boolean> {
    // The port has no ranged read: the size from a HEAD bounds the GET to the local segment's size.
    const info = await this.store.head(key);
    if (info?.size !== body.byteLength) return false;
    const stored = await this.store.get(key);
    return stored !== null && Buffer.from(body).equals(stored.body);
  }
}
