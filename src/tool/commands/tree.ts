import { createHash, randomBytes } from 'node:crypto';
import type { DeleteCommand, RenameCommand } from '../types.js';
import { messages } from '../messages.js';
import { decodeText, encodeText } from '../text.js';
import { MemvaultError } from '../../errors.js';
import { PreconditionFailedError } from '../../vault/user-files.js';
import { fileAncestor, fileNameConflict, filesThatAreDirectories, NameConflictError, treeNameConflict, type NameConflict } from '../../vault/names.js';
import { writeRetried } from '../../telemetry/signals.js';
import { newFenceId } from '../../store/fence.js';
import { isWithin, MEMORY_ROOT } from '../../vault/paths.js';
import type { FileVersion, ListedFile } from '../../vault/user-files.js';
import { forEachLimit } from '../../util/concurrency.js';
import { fail, type CommandEnv } from './env.js';

/**
 * memvault's own bookkeeping lives in a reserved hidden directory of the user's tree, so that it is
 * encrypted and erased like the user's files. The path guard refuses it to the model.
 */
export const RESERVED_DIR = `${MEMORY_ROOT}/.memvault`;

async function collect(files: AsyncIterable<ListedFile>): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  for await (const file of files) out.push(file);
  return out;
}

export async function remove(command: DeleteCommand, env: CommandEnv): Promise<string> {
  const { path } = command;
  if (path === MEMORY_ROOT) fail('INVALID_PATH', messages.deleteRoot());
  return env.locks.withTree(env.files.uid, async () => {
    // A name is a file or a directory; on a store where it is both (written by an older version, or
    // by hand), delete takes both halves, so nothing of the name is left behind.
    const [file, below] = await Promise.all([env.files.stat(path, { forFence: true }), collect(env.files.listFiles(path))]);
    const op = newFenceId();
    if (file && below.length === 0) {
      await fenceAway(path, file.etag, 'deleted', op, env);
      return messages.deleted(path);
    }
    const files = below.map((f) => ({ path: f.path, etag: f.etag }));
    if (file) files.push({ path, etag: file.etag });
    if (files.length === 0) fail('NOT_FOUND', messages.deleteMissing(path));
    // Not journalled: a journal is a file, which the quota would count, and a user at the quota
    // must still be able to delete. Each file is fenced (a conditional PUT of a "deleted" marker
    // over the version listed, or over a newer one it finds), so an edit racing the delete either
    // lands first (and is deleted with the file) or loses at the server and finds no file. A crash
    // part-way leaves some files deleted and the rest whole; deleting again finishes the job.
    let failed = 0;
    await forEachLimit(files, DIRECTORY_MOVE_CONCURRENCY, async (f) => {
      try {
        await fenceAway(f.path, f.etag, 'deleted', op, env);
      } catch {
        failed += 1;
      }
    });
    if (failed > 0) throw new MemvaultError('STORE_UNAVAILABLE', messages.deletePartial(path, failed, files.length));
    return messages.deleted(path);
  });
}

/**
 * What one fence attempt found: it landed (or had landed: our own marker, whose answer was lost),
 * or it lost to a newer version of the file (`file`), or to no file at all (deleted, moved or swept
 * by someone else: `file` undefined).
 */
type FenceAttempt = { fenced: true } | { fenced: false; file: FileVersion | undefined };

/**
 * One fence of `path`, `If-Match` `etag` (UserFiles.fence: what follows it has settled when this
 * returns). On a lost condition the path is inspected: a marker of this command's own `op` is our
 * fence (the SDK's retry met it after its answer was lost), cleaned up like a landed one. The one mechanism behind
 * `fenceAway`, `withdrawCopy` and `fenceSource`, which differ only in what they do after a loss.
 */
async function fenceOwn(path: string, etag: string, reason: 'moved' | 'deleted', op: string, env: CommandEnv): Promise<FenceAttempt> {
  try {
    await (
      await env.files.fence(path, etag, reason, op)
    ).settled;
    return { fenced: true };
  } catch (error) {
    if (!(error instanceof PreconditionFailedError)) throw error;
    const state = await env.files.inspect(path);
    if (state?.marker?.op === op) {
      await cleanUpMarker(path, state.marker.etag, env);
      return { fenced: true };
    }
    return { fenced: false, file: state?.file };
  }
}

/**
 * Take a file out of use: fence it (`If-Match` the version known; on a lost condition the newer
 * version found is fenced instead, so the delete takes what is there when it lands), then clean the
 * marker up. Returns false when the file was already gone (someone else deleted, moved or swept it).
 */
async function fenceAway(path: string, etag: string, reason: 'moved' | 'deleted', op: string, env: CommandEnv): Promise<boolean> {
  for (let attempt = 0; attempt < env.limits.maxWriteAttempts; attempt++) {
    const attempted = await fenceOwn(path, etag, reason, op, env);
    if (attempted.fenced) return true;
    if (attempted.file === undefined) return false;
    etag = attempted.file.etag;
  }
  fail('CONFLICT', messages.conflict(path));
}

/**
 * Take back a copy this command wrote, only as it wrote it: fence it `If-Match` the copy's own
 * version, never a newer one (unlike `fenceAway`, which takes what is there). Another instance may
 * have found the copy and edited it, and that edit is acknowledged: the lost condition then keeps
 * the copy, edit and all. A fence, not `remove(If-Match)`: on RGW 16, which ignores DELETE conditions,
 * an edit landing between a check and the DELETE would be deleted with it. Returns whether the copy was taken back
 * (false: rewritten since, and kept, or already gone).
 */
async function withdrawCopy(path: string, etag: string, op: string, env: CommandEnv): Promise<boolean> {
  return (await fenceOwn(path, etag, 'deleted', op, env)).fenced;
}

/**
 * Delete a marker this command wrote whose PUT's answer was lost, only as it wrote it (a file
 * created over it since stays; docs/s3.md). Best effort: the fence
 * already took the file out of use, and a marker left behind is no file to anyone (a create
 * replaces it, the sweeper removes it once it is idle past the TTL).
 */
async function cleanUpMarker(path: string, etag: string, env: CommandEnv): Promise<void> {
  await env.files.remove(path, { ifMatch: etag }).catch(() => undefined);
}

export async function rename(command: RenameCommand, env: CommandEnv): Promise<string> {
  const from = command.old_path;
  const to = command.new_path;
  if (from === MEMORY_ROOT) fail('INVALID_PATH', messages.renameRoot());
  if (to === MEMORY_ROOT || from === to) fail('ALREADY_EXISTS', messages.destinationExists(to));
  if (isWithin(to, from)) fail('INVALID_PATH', messages.renameIntoItself(from, to));
  return env.locks.withTree(env.files.uid, async () => {
    const [source, below] = await Promise.all([env.files.read(from), collect(env.files.listFiles(from))]);
    if (source && below.length === 0) {
      await moveFile(from, to, source, env);
      return messages.renamed(from, to);
    }
    // A directory; on a store where the name is also a file, the file moves with it (to `to`).
    await moveDirectory(
      from,
      to,
      source ? [{ path: from, size: source.data.byteLength, lastModified: source.lastModified, etag: source.etag }, ...below] : below,
      env,
    );
    return messages.renamed(from, to);
  });
}

/** A name conflict met at a rename's destination, in the rename's words. */
function failOnConflict(to: string, conflict: NameConflict): never {
  if (conflict.kind === 'ancestor-is-file') fail('NOT_A_DIRECTORY', messages.ancestorIsFile(to, conflict.ancestor));
  fail('ALREADY_EXISTS', messages.destinationExists(to));
}

/**
 * A file: put the target only if nothing is there (`If-None-Match: *`), then delete the source
 * only if it is still the version that was copied (`If-Match`). If it was edited in between, copy
 * the newer version over our own target and try again, so no edit is lost. A crash leaves the file
 * at its old place, its new place or both; renaming again completes it (a target that already holds
 * exactly the source's bytes is taken as our own earlier copy).
 */
async function moveFile(from: string, to: string, source: { data: Uint8Array; etag: string }, env: CommandEnv): Promise<void> {
  // No look at the destination before the copy: its create-only PUT refuses a file there, and the
  // check the created name runs after it lands (src/vault/names.ts) a directory there or a file
  // above it, taking the copy back before the error.
  let target: { etag: string };
  try {
    target = await env.files.write(to, source.data, { ifNoneMatch: true });
  } catch (error) {
    if (error instanceof NameConflictError) failOnConflict(to, error.conflict);
    if (!(error instanceof PreconditionFailedError)) throw error;
    const existing = await env.files.read(to);
    if (!existing || !sameBytes(existing.data, source.data)) fail('ALREADY_EXISTS', messages.destinationExists(to));
    target = { etag: existing.etag };
    // Our own earlier (or answer-lost) copy: the check its write would have run after landing.
    const conflict = await fileNameConflict(env.files, to);
    if (conflict) failOnConflict(to, conflict);
  }
  if (!(await fenceSource(from, to, source.etag, target.etag, newFenceId(), env))) fail('NOT_FOUND', messages.renameMissing(from));
}

/**
 * The linearisation point of moving one file: replace the source, `If-Match` the version copied, by
 * a "moved" marker (a conditional PUT, which every listed server enforces). An edit of the source
 * that landed after the copy makes the fence lose: the newer version is copied over our own copy
 * (`If-Match` the copy we wrote) and the fence tried again, so no acknowledged edit is lost; an
 * editor whose write comes after the fence loses its own condition, re-reads and finds no file.
 * Then the marker is cleaned up. Returns false when the source was deleted (or swept) after it was
 * copied: the copy is taken back (fenced too), as the file no longer exists.
 */
async function fenceSource(from: string, to: string, sourceEtag: string, targetEtag: string, op: string, env: CommandEnv, origin?: string): Promise<boolean> {
  for (let attempt = 0; attempt < env.limits.maxWriteAttempts; attempt++) {
    const attempted = await fenceOwn(from, sourceEtag, 'moved', op, env);
    if (attempted.fenced) return true;
    if (attempted.file === undefined) {
      // The source was deleted (or swept) after it was copied: that came first, so the copy goes
      // too, unless someone edited it meanwhile (then their acknowledged edit stays with it).
      await withdrawCopy(to, targetEtag, op, env);
      return false;
    }
    writeRetried('rename');
    try {
      const copyOptions = origin !== undefined ? { ifMatch: targetEtag, origin, deferNameCheck: true } : { ifMatch: targetEtag };
      targetEtag = (await env.files.write(to, attempted.file.data, copyOptions)).etag;
    } catch (copyError) {
      // Both the source and our copy were edited: neither may be overwritten. Both stay whole.
      if (copyError instanceof PreconditionFailedError) fail('CONFLICT', messages.conflict(from));
      throw copyError;
    }
    sourceEtag = attempted.file.etag;
  }
  fail('CONFLICT', messages.conflict(from));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

const DIRECTORY_MOVE_CONCURRENCY = 8;

/** A journal older than this is ignored (and replaced): a rename is resumed soon after it failed, or not at all. */
export const RENAME_JOURNAL_TTL_MS = 24 * 60 * 60 * 1000;
const JOURNAL_DIR = `${RESERVED_DIR}/renames`;

/**
 * The journal of a directory rename or delete lives at a path derived from the directory it
 * changes (not from the destination): two renames of one directory contend for one key, and the
 * create-only PUT of the journal lets exactly one of them start (the server decides, not a DELETE).
 */
export function journalPath(dir: string): string {
  const id = createHash('sha256').update(`tree\u0000${dir}`).digest('hex').slice(0, 32);
  return `${JOURNAL_DIR}/${id}`;
}

interface TreeJournal {
  /** Random, per attempt: the `origin` of every copy a rename writes. */
  id: string;
  op: 'rename' | 'delete';
  from: string;
  /** A rename's destination. */
  to?: string;
  /** The vault instance that wrote it (runnerOf): only it resumes the journal before `limits.resumeAfterMs`. */
  runner?: string;
}

/**
 * The runner of a journal: one per vault instance (its tree lock), which runs one tree operation of
 * a user at a time, so a journal of its own is never live beside it: it was left by a failure.
 */
const runners = new WeakMap<object, string>();
function runnerOf(env: CommandEnv): string {
  let runner = runners.get(env.locks);
  if (runner === undefined) runners.set(env.locks, (runner = randomBytes(16).toString('hex')));
  return runner;
}

function parseJournal(file: FileVersion | null): TreeJournal | null {
  if (!file || Date.now() - file.lastModified.getTime() > RENAME_JOURNAL_TTL_MS) return null;
  try {
    const v = JSON.parse(decodeText(file.data) ?? '') as Partial<TreeJournal>;
    const op = v.op ?? (typeof v.to === 'string' ? 'rename' : undefined);
    if (typeof v.id !== 'string' || !/^[0-9a-f]{32}$/.test(v.id) || typeof v.from !== 'string' || (op !== 'rename' && op !== 'delete')) return null;
    if (op === 'rename' && typeof v.to !== 'string') return null;
    return { id: v.id, op, from: v.from, ...(op === 'rename' ? { to: v.to! } : {}), ...(typeof v.runner === 'string' ? { runner: v.runner } : {}) };
  } catch {
    return null; // damaged: not resumable
  }
}

/**
 * The live journal at `path`, or null: a journal that is missing, older than the TTL, of another
 * format (the pre-id format could not tell its copies apart) or damaged is not resumable.
 */
async function openJournal(path: string, env: CommandEnv): Promise<{ journal: TreeJournal | null; file: FileVersion | null }> {
  const file = await env.files.read(path);
  return { journal: parseJournal(file), file };
}

function busy(path: string, other: TreeJournal | null): never {
  fail(
    'CONFLICT',
    other === null
      ? messages.treeBusy(path)
      : other.op === 'rename'
        ? messages.treeBusyRename(path, other.from, other.to!)
        : messages.treeBusyDelete(path, other.from),
  );
}

function sameOperation(a: TreeJournal, b: Omit<TreeJournal, 'id'>): boolean {
  return a.op === b.op && a.from === b.from && a.to === b.to;
}

/** Whether two tree operations touch a common path (one's source or destination within the other's). */
function overlaps(a: Omit<TreeJournal, 'id'>, b: TreeJournal): boolean {
  const pa = [a.from, ...(a.to !== undefined ? [a.to] : [])];
  const pb = [b.from, ...(b.to !== undefined ? [b.to] : [])];
  return pa.some((p) => pb.some((q) => isWithin(p, q) || isWithin(q, p)));
}

interface HeldJournal {
  path: string;
  journal: TreeJournal;
  etag: string;
  /** Written by this run (false: an earlier run's, being resumed). */
  fresh: boolean;
}

/**
 * Start (or resume) a tree operation: its journal is created `If-None-Match: *` (or over a stale
 * one `If-Match`), so of two operations on one directory exactly one starts; the other gets a clear
 * error. Then, as for names (src/vault/names.ts), write, then check: every other live journal is
 * read, and one whose paths overlap ours (a rename of a parent, of a child, into or out of ours)
 * makes us withdraw ours and refuse: of two overlapping operations at least one sees the other.
 */
async function holdJournal(
  op: Omit<TreeJournal, 'id'>,
  found: { journal: TreeJournal | null; file: FileVersion | null },
  env: CommandEnv,
): Promise<HeldJournal> {
  const path = journalPath(op.from);
  let held: HeldJournal;
  if (found.journal) {
    if (!sameOperation(found.journal, op)) busy(op.from, found.journal);
    if (found.journal.runner === runnerOf(env)) held = { path, journal: found.journal, etag: found.file!.etag, fresh: false };
    else {
      // Another (dead) instance's journal: claimed `If-Match`, so that of two instances resuming it
      // exactly one goes on, and its idle time starts again.
      const journal: TreeJournal = { ...found.journal, runner: runnerOf(env) };
      try {
        const { etag } = await env.files.write(path, encodeText(JSON.stringify(journal)), { ifMatch: found.file!.etag, deferNameCheck: true });
        held = { path, journal, etag, fresh: false };
      } catch (error) {
        if (error instanceof PreconditionFailedError) busy(op.from, parseJournal(await env.files.read(path)));
        throw error;
      }
    }
  } else {
    const journal: TreeJournal = { id: randomBytes(16).toString('hex'), runner: runnerOf(env), ...op };
    const record = encodeText(JSON.stringify(journal));
    try {
      const { etag } = await env.files.write(path, record, found.file ? { ifMatch: found.file.etag } : { ifNoneMatch: true, deferNameCheck: true });
      held = { path, journal, etag, fresh: true };
    } catch (error) {
      if (error instanceof PreconditionFailedError) busy(op.from, parseJournal(await env.files.read(path)));
      throw error;
    }
  }
  for await (const file of env.files.listFiles(JOURNAL_DIR)) {
    if (file.path === path || Date.now() - file.lastModified.getTime() > RENAME_JOURNAL_TTL_MS) continue;
    const other = parseJournal(await env.files.read(file.path));
    if (other && overlaps(op, other)) {
      if (held.fresh) await env.files.remove(path, { ifMatch: held.etag }).catch(() => undefined);
      busy(op.from, other);
    }
  }
  return held;
}

/**
 * While a directory rename runs, its journal is rewritten (`If-Match`, with a new `beat` each time
 * so that its ETag changes) every quarter of `limits.resumeAfterMs`. Another instance takes a
 * journal for a dead run's only once it has been idle that long, so a live rename is never resumed
 * beside itself, however long it runs. A beat that loses its condition to another run's journal
 * means this run stalled past `resumeAfterMs` and was claimed: it stops before its next file
 * (`assertHeld`), each file whole at its old or new place for the claimer to finish, and leaves the
 * journal to it.
 */
class JournalHeartbeat {
  private etag: string;
  private beats = 0;
  private claimedBy: TreeJournal | null | undefined;
  private beating: Promise<void> | undefined;
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly held: HeldJournal,
    private readonly env: CommandEnv,
  ) {
    this.etag = held.etag;
    if (env.limits.resumeAfterMs > 0) {
      this.timer = setInterval(() => void this.beat(), Math.max(JOURNAL_BEAT_MIN_MS, env.limits.resumeAfterMs / 4));
      this.timer.unref?.();
    }
  }

  /** The journal's ETag as this run last wrote it. */
  get currentEtag(): string {
    return this.etag;
  }

  /** Whether another run has claimed the journal (this one then leaves it alone). */
  get claimed(): boolean {
    return this.claimedBy !== undefined;
  }

  /** The spec's busy error, naming the claimer's operation, once another run has claimed the journal. */
  assertHeld(): void {
    if (this.claimedBy !== undefined) busy(this.held.journal.from, this.claimedBy);
  }

  private beat(): Promise<void> {
    this.beating ??= (async () => {
      const record = encodeText(JSON.stringify({ ...this.held.journal, beat: ++this.beats }));
      try {
        this.etag = (await this.env.files.write(this.held.path, record, { ifMatch: this.etag, deferNameCheck: true })).etag;
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) return; // store unreachable: the next beat tries again
        // Our own beat whose answer was lost (the SDK's retry met it), or another run's journal.
        const now = await this.env.files.read(this.held.path).catch(() => undefined);
        if (now === undefined) return;
        const journal = parseJournal(now);
        if (now !== null && journal?.id === this.held.journal.id && journal.runner === this.held.journal.runner) this.etag = now.etag;
        else this.claimedBy = journal;
      }
    })().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /** Stop beating, once a beat on its way has landed. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.beating;
  }
}

/** The shortest interval between two beats of a journal, whatever `resumeAfterMs` says. */
const JOURNAL_BEAT_MIN_MS = 100;

interface Copy {
  from: string;
  to: string;
  sourceEtag: string;
  targetEtag: string;
  /** Written by this run with If-None-Match (so this run may take it back). */
  created: boolean;
}

/**
 * A directory: write a journal entry with a fresh id, copy every file (targets `If-None-Match: *`,
 * each carrying the id as its origin), check the destination's names, then delete every source
 * (`If-Match` the copied version), then drop the journal. A crash at any step leaves each file whole
 * at its old place, its new place or both. Asked again, the same rename resumes only onto exactly
 * the state it left: every file at the destination must still be a copy it wrote (its origin) that
 * nobody rewrote since; anything else there, or a journal past its TTL, makes the destination an
 * existing one, in the spec's words. So a resumed rename only ever overwrites its own copies.
 */
async function moveDirectory(from: string, to: string, sources: ListedFile[], env: CommandEnv): Promise<void> {
  const journalAt = journalPath(from);
  const targetOf = (path: string): string => to + path.slice(from.length);
  const [found, fileAbove, destinationFile, destination] = await Promise.all([
    openJournal(journalAt, env),
    fileAncestor(env.files, to),
    env.files.stat(to),
    collect(env.files.listFiles(to)),
  ]);
  const op = { op: 'rename' as const, from, to };
  if (found.journal && !sameOperation(found.journal, op)) busy(from, found.journal);
  // The same rename, journalled by another instance less than `resumeAfterMs` ago, may still be
  // running: two runs of one journal (its id is the origin of every copy, so each takes the
  // other's copies and markers for its own) let one finish and drop the journal while the other
  // still fences, and a later rename back then loses files to the laggard (the history checker
  // found it). Only this instance's own journal is resumed at once (a failure it survived); another's
  // once it has been idle that long (an instance that died).
  if (found.journal && found.journal.runner !== runnerOf(env) && Date.now() - found.file!.lastModified.getTime() < env.limits.resumeAfterMs)
    busy(from, found.journal);
  const journal = found.journal;
  if (sources.length === 0) {
    // Nothing left to move: an earlier run got as far as dropping its journal (then its copies are
    // at the destination, and the rename is done) or the source is really missing.
    const finished = journal !== null && (await holdsCopyOf(journal.id, destination, env));
    if (found.file) await env.files.remove(journalAt, { ifMatch: found.file.etag });
    if (finished) return;
    fail('NOT_FOUND', messages.renameMissing(from));
  }
  if (fileAbove !== null) fail('NOT_A_DIRECTORY', messages.ancestorIsFile(to, fileAbove));
  // Every target is storable (within the key limit), or nothing is written at all.
  for (const source of sources) env.files.assertStorable(targetOf(source.path));
  const existing = destination.map((f) => f.path);
  if (destinationFile) existing.push(to);
  const ours = new Map<string, FileVersion>();
  if (existing.length > 0) {
    if (!journal) fail('ALREADY_EXISTS', messages.destinationExists(to));
    const versions = await Promise.all(existing.map((path) => env.files.read(path)));
    const changed = versions.some((version) => version !== null && version.origin !== journal.id);
    if (changed) {
      // The destination changed since the rename stopped: it can never resume, so its journal goes
      // (and with it the hold on these directories). Every file stays whole where it is.
      await env.files.remove(journalAt, { ifMatch: found.file!.etag });
      fail('ALREADY_EXISTS', messages.destinationExists(to));
    }
    existing.forEach((path, i) => {
      const version = versions[i];
      if (version) ours.set(path, version); // (deleted meanwhile: nothing there to overwrite)
    });
  }
  const held = await holdJournal(op, found, env);
  const id = held.journal.id;
  const heartbeat = new JournalHeartbeat(held, env);
  const copied: Copy[] = [];
  /** A write of this run failed without telling whether it landed: its copy may be at the destination. */
  let uncertain = false;
  try {
    // Files move independently (each whole at its old place, new place or both), so several at once.
    try {
      await forEachLimit(sources, DIRECTORY_MOVE_CONCURRENCY, async (file) => {
        heartbeat.assertHeld();
        const target = targetOf(file.path);
        const source = await env.files.read(file.path);
        if (!source) return; // deleted meanwhile
        const earlier = ours.get(target);
        let targetEtag: string;
        let created = false;
        try {
          if (!earlier) {
            targetEtag = (await env.files.write(target, source.data, { ifNoneMatch: true, origin: id, deferNameCheck: true })).etag;
            created = true;
          } else if (sameBytes(earlier.data, source.data)) {
            targetEtag = earlier.etag;
          } else {
            targetEtag = (await env.files.write(target, source.data, { ifMatch: earlier.etag, origin: id, deferNameCheck: true })).etag;
          }
        } catch (error) {
          if (!(error instanceof PreconditionFailedError)) {
            uncertain = true;
            throw error;
          }
          // A write whose answer was lost (the SDK's retry then met it) is there with our id and the
          // source's bytes; anything else was written by someone else while we copied: theirs now.
          const landed = await env.files.read(target);
          if (!landed || landed.origin !== id || !sameBytes(landed.data, source.data)) fail('ALREADY_EXISTS', messages.destinationExists(to));
          targetEtag = landed.etag;
          created = !earlier;
        }
        copied.push({ from: file.path, to: target, sourceEtag: source.etag, targetEtag, created });
      });
      const broken = filesThatAreDirectories(sources.map((s) => s.path));
      const conflict = await treeNameConflict(env.files, to, new Set([...broken].map(targetOf)));
      if (conflict) failOnConflict(to, conflict);
    } catch (error) {
      if (error instanceof MemvaultError && (error.code === 'ALREADY_EXISTS' || error.code === 'NOT_A_DIRECTORY')) {
        // A refused rename changes nothing: take back what this run created (its sources are all still
        // in place, as nothing was deleted yet), and the journal if nothing of an earlier run is left.
        // A copy of unknown fate keeps the journal, so that a later run can still recognise it.
        await takeBack(
          copied.filter((c) => c.created),
          id,
          env,
        );
        await heartbeat.stop();
        if (ours.size === 0 && !uncertain && !heartbeat.claimed) await env.files.remove(journalAt, { ifMatch: heartbeat.currentEtag }).catch(() => undefined);
      }
      throw error;
    }
    await forEachLimit(copied, DIRECTORY_MOVE_CONCURRENCY, async (c) => {
      heartbeat.assertHeld();
      await fenceSource(c.from, c.to, c.sourceEtag, c.targetEtag, id, env, id);
    });
  } finally {
    await heartbeat.stop();
  }
  heartbeat.assertHeld();
  await env.files.remove(journalAt);
}

/** Whether one of `files` is still a copy written by the rename `id` (read one by one, stopping at the first). */
async function holdsCopyOf(id: string, files: ListedFile[], env: CommandEnv): Promise<boolean> {
  for (const file of files) if ((await env.files.read(file.path))?.origin === id) return true;
  return false;
}

/** Take back the copies this run created, each only as it wrote it (an edit made since stays). Best effort. */
async function takeBack(copies: Copy[], op: string, env: CommandEnv): Promise<void> {
  await forEachLimit(copies, DIRECTORY_MOVE_CONCURRENCY, async (c) => {
    await withdrawCopy(c.to, c.targetEtag, op, env).catch(() => undefined);
  });
}
