/**
 * Moving a deployment (or one user) from one store to another, the sealed objects as they are: no
 * decryption, the same keys, the same bytes, metadata and tags (an object's ETag and time are the
 * destination's own). The copy is resumable (an object already at the destination with the same
 * content is kept), checked before anything is written and verified after, and fails closed:
 *
 * 1. Check: the source holds a deployment; the destination holds none or the same one, and no
 *    object of the scope that differs in size or that the source does not have (whether the scope
 *    is the whole store or one user's). Else nothing is written.
 * 2. Copy what is missing, create-only; an object there already is compared byte for byte.
 * 3. Verify: every object of the scope, listed at either store, read back at the destination,
 *    equals the source's; one only at the destination is a difference.
 * 4. The deployment record last, once the source's is still the one read at the start: a
 *    destination stopped part-way holds users but no deployment, which every start-up refuses
 *    (STORE_INCONSISTENT), so it is never taken for a whole one.
 */
import { MemvaultError } from '../errors.js';
import { DEPLOYMENT_RECORD_KEY, KEYS_PREFIX, userPrefix } from '../store/layout.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';
import { pairedListing, readCarried, sameCarried, type Carried, type PairedKey } from './migrate-walk.js';

export interface MigrateOptions {
  /** Only this user (their store uid): their key record and objects, and the deployment record. */
  uid?: string;
  /** Called after each object of the copy and of the verification. */
  onProgress?: (progress: MigrateProgress) => void;
}

export interface MigrateProgress {
  phase: 'check' | 'copy' | 'verify';
  done: number;
}

export interface MigrateResult {
  /** Objects in scope at the source (the deployment record included). */
  objects: number;
  /** Written by this run. */
  copied: number;
  /** At the destination already, the same (a resumed run). */
  kept: number;
  bytes: number;
  verified: number;
}

const refused = (why: string): MemvaultError =>
  new MemvaultError('STORE_INCONSISTENT', `memvault migrate: ${why}. Nothing was written.`);

const differs = (what: string): MemvaultError =>
  new MemvaultError(
    'STORE_INCONSISTENT',
    `memvault migrate: ${what} differs at the destination; the migration stopped. Check what else writes to either store, then run it again.`,
  );

export async function migrateStore(
  from: ObjectStore,
  to: ObjectStore,
  options: MigrateOptions = {},
  counts: Record<string, number> = {},
): Promise<MigrateResult> {
  const record = await readCarried(from, DEPLOYMENT_RECORD_KEY);
  if (!record) throw refused('the source holds no deployment record');
  const existing = await readCarried(to, DEPLOYMENT_RECORD_KEY);
  if (existing && !sameCarried(existing, record)) throw refused('the destination holds another deployment');
  const scopes = scopesOf(options.uid);
  const result: MigrateResult = { objects: 1, copied: 0, kept: 0, bytes: 0, verified: 0 };
  const progress = (phase: MigrateProgress['phase'], done: number): void => options.onProgress?.({ phase, done });

  let checked = 0;
  for (const scope of scopes)
    for await (const pair of pairedListing(from, to, scope.prefix, scope.only)) {
      if (pair.key === DEPLOYMENT_RECORD_KEY) continue;
      // Every scope holds only what this migration carries (a --user scope only that user's key
      // record and objects), so an object only at the destination is never another's: it is one
      // deleted at the source since an earlier run, or written by something else. A resumed run's
      // destination holds a part of the source's objects (nothing records a run: what is there is
      // compared), never more, so it passes.
      if (!pair.source) {
        throw refused(
          `the destination holds objects${options.uid === undefined ? '' : ' of this user'} that the source does not have (deleted at the source since an earlier run, or written by something else); start again with a destination without them`,
        );
      } else if (pair.destination && pair.destination.size !== pair.source.size) {
        throw refused('an object at the destination differs from the source');
      }
      progress('check', (checked += 1));
    }

  for (const scope of scopes)
    for await (const pair of pairedListing(from, to, scope.prefix, scope.only)) {
      if (!pair.source || pair.key === DEPLOYMENT_RECORD_KEY) continue;
      const carried = await copyOne(from, to, pair);
      if (carried === null) continue; // deleted at the source since it was listed: not in scope any more
      result.objects += 1;
      result.bytes += carried.body.byteLength;
      if (carried.copied) result.copied += 1;
      else result.kept += 1;
      Object.assign(counts, { copied: result.copied, kept: result.kept });
      progress('copy', result.copied + result.kept);
    }

  for (const scope of scopes)
    for await (const pair of pairedListing(from, to, scope.prefix, scope.only)) {
      if (pair.key === DEPLOYMENT_RECORD_KEY) continue;
      const [a, b] = await Promise.all([readCarried(from, pair.key), readCarried(to, pair.key)]);
      if (!a || !b || !sameCarried(a, b)) throw differs('an object');
      result.verified += 1;
      counts['verified'] = result.verified;
      progress('verify', result.verified);
    }

  // Compared with the source as it is now, as every other object is, not only with the copy read at
  // the start: a record rewritten meanwhile (keys rotate re-wraps it first) would be a stale one.
  const current = await readCarried(from, DEPLOYMENT_RECORD_KEY);
  if (!current || !sameCarried(current, record))
    throw new MemvaultError(
      'STORE_INCONSISTENT',
      "memvault migrate: the source's deployment record changed during the migration (a key rotation?); the migration stopped before writing it. Stop what writes to the source, then run it again.",
    );
  if (!existing) await putCarried(to, DEPLOYMENT_RECORD_KEY, record);
  const written = await readCarried(to, DEPLOYMENT_RECORD_KEY);
  if (!written || !sameCarried(written, record)) throw differs('the deployment record');
  result.verified += 1;
  if (!existing) result.copied += 1;
  else result.kept += 1;
  return result;
}

/** What one migration covers: the whole store, or one user's key record and objects. */
function scopesOf(uid: string | undefined): { prefix: string; only?: string }[] {
  if (uid === undefined) return [{ prefix: '' }];
  return [{ prefix: `${KEYS_PREFIX}${uid}`, only: `${KEYS_PREFIX}${uid}` }, { prefix: userPrefix(uid) }];
}

/** Copies the source's object unless the destination holds the same one; a different one stops the run. */
async function copyOne(
  from: ObjectStore,
  to: ObjectStore,
  pair: PairedKey,
): Promise<(Carried & { copied: boolean }) | null> {
  const source = await readCarried(from, pair.key);
  if (!source) return null;
  if (pair.destination) {
    const there = await readCarried(to, pair.key);
    if (there && sameCarried(there, source)) return { ...source, copied: false };
    if (there) throw differs('an object');
  }
  try {
    await putCarried(to, pair.key, source);
  } catch (error) {
    // Written by an earlier, interrupted request of this run (or someone else): compare it.
    if (!(error instanceof PreconditionFailedError)) throw error;
    const there = await readCarried(to, pair.key);
    if (!there || !sameCarried(there, source)) throw differs('an object');
    return { ...source, copied: false };
  }
  return { ...source, copied: true };
}

function putCarried(to: ObjectStore, key: string, object: Carried): Promise<{ etag: string }> {
  return to.put(key, object.body, { ifNoneMatch: '*', metadata: object.metadata, tags: object.tags });
}
