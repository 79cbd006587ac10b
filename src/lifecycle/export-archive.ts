/**
 * `memvault user export` (an access request): every file of a user, decrypted, into a tar archive,
 * with the file history and a manifest. Every object goes through the one verified read
 * (src/crypto/verified-read.ts), as the vault's reads do: a file put back to an older version of
 * itself, or two kept versions swapped on disk, stop the export with INTEGRITY instead of an
 * archive that files content under the wrong version or serves a rolled-back file as current.
 */
import { pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { Pack } from 'tar-stream';
import { MemvaultError } from '../errors.js';
import { parseVersionKey, userHistoryPrefix } from '../store/layout.js';
import { listAll, type ObjectStore } from '../store/port.js';
import type { EncryptedCodecProvider } from '../crypto/codec.js';
import type { UserCodec } from '../crypto/user-codec.js';
import { readCurrentFile, readKeptVersion } from '../crypto/verified-read.js';

export interface ExportProgress {
  files: number;
  bytes: number;
}

export interface ExportUserOptions {
  store: ObjectStore;
  codecProvider: EncryptedCodecProvider;
  userId: string;
  /** Receives the tar archive (e.g. fs.createWriteStream(file)); it is ended when the export ends. */
  out: Writable;
  onProgress?: (progress: ExportProgress) => void;
}

export interface ExportResult {
  uid: string;
  files: number;
  bytes: number;
  /** Kept versions of the user's files (file history, docs/versions.md), tombstones included. */
  versions: number;
}

/** memvault's bookkeeping (rename journals) keeps no history: no listing of one is needed to read it. */
const RESERVED_PREFIX = '/memories/.memvault/';

/**
 * Write every file of a user, decrypted, into a tar archive at its memory path
 * (`memories/notes/a.md`). A file or version that does not pass the verified read stops the export
 * with INTEGRITY: an access request answered with silently missing or misfiled data would be worse
 * than an error (the archive stream is destroyed, so no complete-looking archive is left).
 */
export async function exportUser(options: ExportUserOptions): Promise<ExportResult> {
  const uid = options.codecProvider.uidOf(options.userId);
  let codec: UserCodec;
  try {
    codec = await options.codecProvider.forUid(uid);
  } catch (e) {
    if (e instanceof MemvaultError && e.code === 'NOT_FOUND')
      throw new MemvaultError('NOT_FOUND', 'No memories are stored for this user.', { cause: e });
    throw e;
  }
  // Loaded here, not at import: a vault that never exports does not load the tar code.
  const { default: tar } = await import('tar-stream');
  const pack = tar.pack();
  const written = pipeline(pack, options.out);
  const progress: ExportProgress = { files: 0, bytes: 0 };
  const manifest: ExportManifestEntry[] = [];
  const history: ExportHistoryEntry[] = [];
  try {
    for await (const object of listAll(options.store, codec.filesPrefix)) {
      const path = codec.pathFor(object.key);
      const file = await readCurrentFile(options.store, codec, path, object.key, !path.startsWith(RESERVED_PREFIX));
      if (!file) continue; // deleted or fenced since the listing
      await addEntry(pack, path.slice(1), file.data, file.stored.lastModified);
      manifest.push({ path, size: file.data.byteLength, modified: file.stored.lastModified.toISOString() });
      progress.files += 1;
      progress.bytes += file.data.byteLength;
      options.onProgress?.({ ...progress });
    }
    // The file history is the user's data too (an access request covers it): each kept version's
    // content under history/, described in the manifest with who made it and when.
    for await (const object of listAll(options.store, userHistoryPrefix(uid))) {
      const place = parseVersionKey(uid, object.key);
      if (!place) continue; // not a version key: nothing memvault wrote
      const entry = await exportVersion(
        pack,
        options.store,
        codec,
        codec.pathFor(place.fileKey),
        object.key,
        place.seq,
      );
      if (entry) history.push(entry); // null: dropped since the listing (retention, the quota's pruning)
    }
    // Last, because sizes and the count are known only now; a reader finds it by name.
    const document: ExportManifest = {
      format: EXPORT_MANIFEST_FORMAT,
      version: 2,
      exportedAt: new Date().toISOString(),
      uid,
      files: manifest.length,
      bytes: progress.bytes,
      entries: manifest,
      versions: history.length,
      history,
    };
    await addEntry(
      pack,
      EXPORT_MANIFEST_NAME,
      new TextEncoder().encode(`${JSON.stringify(document, null, 2)}\n`),
      new Date(),
    );
    pack.finalize();
  } catch (e) {
    pack.destroy(e instanceof Error ? e : new Error('export failed'));
    await written.catch(() => undefined);
    throw e;
  }
  await written;
  return { uid, files: progress.files, bytes: progress.bytes, versions: history.length };
}

/** The archive's last entry: what it holds, so a person (or a script) can check it is complete. */
export const EXPORT_MANIFEST_NAME = 'manifest.json';
export const EXPORT_MANIFEST_FORMAT = 'memvault-user-export';

export interface ExportManifestEntry {
  /** The memory path (`/memories/notes/a.md`); the file is at the same path without the leading '/'. */
  path: string;
  /** Bytes of the file as the user wrote it (decrypted). */
  size: number;
  /** When it was last written (ISO 8601). */
  modified: string;
}

/** A kept version of a file (docs/versions.md) in the archive. */
export interface ExportHistoryEntry {
  /** The memory path of the file it is a version of. */
  path: string;
  /** Its place in the file's history. */
  seq: number;
  /** Who made it: model, host, restore or sweeper. */
  actor: string;
  /** When it was made (ISO 8601). */
  time: string;
  /** Bytes of its content (0 for a tombstone). */
  size: number;
  /** On a tombstone: how the file ended (deleted, moved, expired); it has no content entry. */
  end?: string;
  /** The archive entry holding its content: `history/memories/notes/a.md/@<seq>`. */
  entry?: string;
}

export interface ExportManifest {
  format: typeof EXPORT_MANIFEST_FORMAT;
  /** 2: with the file history (1: files only). */
  version: 2;
  exportedAt: string;
  /** The user's pseudonymous id in this deployment. */
  uid: string;
  files: number;
  bytes: number;
  entries: ExportManifestEntry[];
  /** How many kept versions the archive describes. */
  versions: number;
  history: ExportHistoryEntry[];
}

/**
 * One kept version into the archive through the verified read (its record opens for this path,
 * describes this body and names this number): who made it, when, how it ended, and its content, if
 * any, under `history/`. Null when it is gone since the listing.
 */
async function exportVersion(
  pack: Pack,
  store: ObjectStore,
  codec: UserCodec,
  path: string,
  key: string,
  seq: number,
): Promise<ExportHistoryEntry | null> {
  const version = await readKeptVersion(store, codec, path, key, seq);
  if (!version) return null;
  const { record, data, stored } = version;
  const base = { path, seq, actor: record.actor, time: new Date(record.time).toISOString() };
  if (record.end !== undefined) return { ...base, size: 0, end: record.end };
  const entry = `history/${path.slice(1)}/@${seq}`;
  await addEntry(pack, entry, data, stored.lastModified);
  return { ...base, size: data.byteLength, entry };
}

function addEntry(pack: Pack, name: string, data: Uint8Array, mtime: Date): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(
      { name, size: data.byteLength, mtime, mode: 0o600, type: 'file' },
      Buffer.from(data.buffer, data.byteOffset, data.byteLength),
      (err) => (err ? reject(err) : resolve()),
    );
  });
}
