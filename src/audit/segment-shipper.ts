/**
 * Shipping sealed segments: after each seal (and on close) every sealed segment not yet uploaded
 * goes to the uploader, oldest first, stopping at the first failure (the next seal or close
 * retries). Progress lives in FILE.upload-state.json so a restart does not re-send everything;
 * create-only uploads, and the byte comparison behind an 'exists', make a lost progress file harmless.
 */
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { MemvaultError } from '../errors.js';
import { commitTemporary, temporaryPathFor } from '../util/fs.js';
import { recordOrConfigError } from './chain-head.js';
import { listSealedSegments } from './segments.js';
import { asError } from './sink.js';
import { segmentKey, type ObjectLockRetention, type SegmentUploader } from './uploader.js';

const DAY_MS = 24 * 60 * 60 * 1000;

interface UploadState {
  uploadedThrough: number;
}

export interface SegmentShipperOptions {
  /** The active audit file; its sealed segments are shipped. */
  file: string;
  uploader: SegmentUploader;
  prefix: string;
  objectLock: ObjectLockRetention | undefined;
  now: () => number;
  onError: ((error: Error) => void) | undefined;
}

export class SegmentShipper {
  private uploads: Promise<void> = Promise.resolve();
  private lastError: Error | undefined;

  constructor(private readonly options: SegmentShipperOptions) {}

  /** The last upload failure, if the most recent attempt failed. */
  get uploadError(): Error | undefined {
    return this.lastError;
  }

  /** Queues a pass over the sealed segments, once `ready` (the sealed files' closing) resolves. */
  schedule(ready: () => Promise<unknown>): void {
    this.uploads = this.uploads.then(() =>
      ready()
        .then(() => this.uploadPending())
        .then(
          () => {
            this.lastError = undefined;
          },
          (error: unknown) => {
            this.lastError = asError(error);
            this.options.onError?.(this.lastError);
          },
        ),
    );
  }

  /** Resolves when every queued pass has run. */
  idle(): Promise<void> {
    return this.uploads;
  }

  private async uploadPending(): Promise<void> {
    const { file, uploader, prefix, objectLock, now } = this.options;
    const statePath = `${file}.upload-state.json`;
    const state = readUploadState(statePath);
    for (const segment of listSealedSegments(file)) {
      if (segment.index <= state.uploadedThrough) continue;
      const body = readFileSync(segment.file);
      const first = recordOrConfigError(
        body.subarray(0, Math.max(0, body.indexOf(0x0a))).toString('utf8'),
        'a sealed segment',
      );
      const retention = objectLock
        ? { mode: objectLock.mode, retainUntil: new Date(now() + objectLock.days * DAY_MS) }
        : undefined;
      const key = segmentKey(first.instance, first.seq, prefix);
      if ((await uploader.upload(key, body, retention)) === 'exists') await checkSame(uploader, key, body);
      state.uploadedThrough = segment.index;
      const temporary = temporaryPathFor(statePath);
      try {
        await writeFile(temporary, JSON.stringify(state), { mode: 0o600 });
        await commitTemporary(temporary, statePath);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    }
  }
}

/**
 * An 'exists' counts as shipped only when the object there is this segment, byte for byte: another
 * writer under the same instance id, or a copy altered in the store, is reported and the local
 * segment stays unshipped (the next pass asks again).
 */
async function checkSame(uploader: SegmentUploader, key: string, body: Uint8Array): Promise<void> {
  if (!uploader.holds)
    throw new MemvaultError(
      'CONFIG',
      `audit: segment ${key} is already in the audit store and this uploader cannot compare it (it has no holds method); not counted as shipped, the local segment is kept`,
    );
  if (!(await uploader.holds(key, body)))
    throw new MemvaultError(
      'STORE_INCONSISTENT',
      `audit: segment ${key} was not shipped: the audit store already holds different content at that key (another writer with this instance id, or an altered copy); the local segment is kept`,
    );
}

function readUploadState(path: string): UploadState {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<UploadState>;
    return { uploadedThrough: typeof parsed.uploadedThrough === 'number' ? parsed.uploadedThrough : 0 };
  } catch {
    return { uploadedThrough: 0 };
  }
}
