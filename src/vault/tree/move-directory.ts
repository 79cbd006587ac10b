/**
 * A directory rename: journal, copies, fences. docs/s3.md, "Directory rename journals".
 */
import { MemvaultError } from '../../errors.js';
import { PreconditionFailedError } from '../user-files.js';
import type { ListedFile } from '../user-files.js';
import type { TreeFileVersion } from '../tree-files.js';
import { fileAncestor, filesThatAreDirectories, treeNameConflict } from '../names.js';
import { forEachLimit } from '../../util/concurrency.js';
import { fail, type TreeEnv } from './env.js';
import { DIRECTORY_MOVE_CONCURRENCY, failOnConflict, fenceSource, sameBytes, withdrawCopy } from './fences.js';
import {
  busy,
  holdJournal,
  JournalHeartbeat,
  journalPath,
  openJournal,
  originsOf,
  runnerIsGone,
  sameOperation,
} from './journal.js';
import { runnerOf } from './runner.js';

interface Copy {
  from: string;
  to: string;
  sourceEtag: string;
  targetEtag: string;
  /** Written by this run with If-None-Match (so this run may take it back). */
  created: boolean;
}

async function collect(files: AsyncIterable<ListedFile>): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  for await (const file of files) out.push(file);
  return out;
}

/**
 * A directory: write a journal entry with a fresh id, copy every file (targets `If-None-Match: *`,
 * each carrying the id as its origin), check the destination's names, then delete every source
 * (`If-Match` the copied version), then drop the journal. A crash at any step leaves each file whole
 * at its old place, its new place or both. Asked again, the same rename resumes only onto exactly
 * the state it left: every file at the destination must still be a copy it wrote (its origin) that
 * nobody rewrote since; anything else there, or a journal past its TTL, makes the destination an
 * existing one, in the spec's words. So a resumed rename only ever overwrites its own copies.
 *
 * Another instance's journal is taken over only once its runner is gone (runnerIsGone), under a new
 * id; the copies of the run it took over are each rewritten (`If-Match`) before their source is
 * fenced. That run may only have been paused: every later step of it is conditional on something
 * the take-over changed (its copies' ETags, the journal's), so each fails and nothing is lost.
 */
export async function moveDirectory(from: string, to: string, sources: ListedFile[], env: TreeEnv): Promise<void> {
  const journalAt = journalPath(from);
  const targetOf = (path: string): string => to + path.slice(from.length);
  const [found, fileAbove, destinationFile, destination] = await Promise.all([
    openJournal(journalAt, env),
    fileAncestor(env.files, to),
    env.files.stat(to),
    collect(env.files.listFiles(to)),
  ]);
  const op = { op: 'rename' as const, from, to };
  if (found.journal && !sameOperation(found.journal, op)) busy(from, found.journal, env);
  // The same rename, journalled by another instance whose runner may still be running: two runs of
  // one journal let one finish and drop the journal while the other still fences. Only this
  // instance's own journal is resumed at once (a failure it survived); another's once its runner is
  // known gone (runner.ts).
  if (found.journal && found.journal.runner !== runnerOf(env) && !runnerIsGone(found, journalAt, env))
    busy(from, found.journal, env);
  const journal = found.journal;
  if (sources.length === 0) {
    // Nothing left to move: an earlier run got as far as dropping its journal (then its copies are
    // at the destination, and the rename is done) or the source is really missing.
    const finished = journal !== null && (await holdsCopyOf(originsOf(journal), destination, env));
    if (found.file) await env.files.remove(journalAt, { ifMatch: found.file.etag });
    if (finished) return;
    fail('NOT_FOUND', env.messages.renameMissing(from));
  }
  if (fileAbove !== null) fail('NOT_A_DIRECTORY', env.messages.ancestorIsFile(to, fileAbove));
  // Every target is storable (within the key limit), or nothing is written at all.
  for (const source of sources) env.files.assertStorable(targetOf(source.path));
  const existing = destination.map((f) => f.path);
  if (destinationFile) existing.push(to);
  const ours = new Map<string, TreeFileVersion>();
  if (existing.length > 0) {
    if (!journal) fail('ALREADY_EXISTS', env.messages.destinationExists(to));
    const origins = originsOf(journal);
    const versions = await Promise.all(existing.map((path) => env.files.read(path)));
    const changed = versions.some(
      (version) => version !== null && (version.origin === undefined || !origins.has(version.origin)),
    );
    if (changed) {
      // The destination changed since the rename stopped: it can never resume, so its journal goes
      // (and with it the hold on these directories). Every file stays whole where it is.
      await env.files.remove(journalAt, { ifMatch: found.file!.etag });
      fail('ALREADY_EXISTS', env.messages.destinationExists(to));
    }
    existing.forEach((path, i) => {
      const version = versions[i];
      if (version) ours.set(path, version); // (deleted meanwhile: nothing there to overwrite)
    });
  }
  const held = await holdJournal(op, found, env);
  const id = held.journal.id;
  const origins = originsOf(held.journal);
  const heartbeat = new JournalHeartbeat(held, env);
  const copied: Copy[] = [];
  /** A write of this run failed without telling whether it landed: its copy may be at the destination. */
  const fate = { uncertain: false };
  try {
    // Files move independently (each whole at its old place, new place or both), so several at once.
    try {
      await forEachLimit(sources, DIRECTORY_MOVE_CONCURRENCY, async (file) => {
        heartbeat.assertHeld();
        const copy = await copyOne(
          file.path,
          targetOf(file.path),
          ours.get(targetOf(file.path)),
          { id, origins, to },
          fate,
          env,
        );
        if (copy) copied.push(copy);
      });
      const broken = filesThatAreDirectories(sources.map((s) => s.path));
      const conflict = await treeNameConflict(env.files, to, new Set([...broken].map(targetOf)));
      if (conflict) failOnConflict(to, conflict, env);
    } catch (error) {
      if (error instanceof MemvaultError && (error.code === 'ALREADY_EXISTS' || error.code === 'NOT_A_DIRECTORY')) {
        // A refused rename changes nothing: take back what this run created (its sources are all still
        // in place, as nothing was deleted yet), and the journal if nothing of an earlier run is left.
        // A copy of unknown fate keeps the journal, so that a later run can still recognise it.
        if (!(await heartbeat.checkClaimed()))
          await takeBack(
            copied.filter((c) => c.created),
            id,
            env,
          );
        if (ours.size === 0 && !fate.uncertain) await heartbeat.withdraw();
        // Refused because another run took this one over (its copies were in the way): say so.
        heartbeat.assertHeld();
      }
      throw error;
    }
    await forEachLimit(copied, DIRECTORY_MOVE_CONCURRENCY, async (c) => {
      heartbeat.assertHeld();
      await fenceSource(c.from, c.to, c.sourceEtag, c.targetEtag, id, env, { origin: id, withdrawable: c.created });
    });
  } finally {
    await heartbeat.stop();
  }
  await heartbeat.finish();
}

/**
 * Copy one file to its target, as this run (`id`). A copy already there that this run wrote, with
 * the source's bytes, is taken as it is; a copy of an earlier run of this rename (`origins`), or an
 * outdated one, is rewritten `If-Match`, so that the run that wrote it, if it is only paused, finds
 * its copy's ETag gone when it wakes (its take-back and its re-copy are conditional on it). A copy
 * such a run writes after this one looked is met by the create-only PUT and rewritten the same way,
 * the source read again first (an edit it copied must not be overwritten by an older read). Null:
 * the source is gone (deleted, or moved by the run this one took over).
 */
async function copyOne(
  from: string,
  to: string,
  known: TreeFileVersion | undefined,
  run: { id: string; origins: Set<string>; to: string },
  fate: { uncertain: boolean },
  env: TreeEnv,
): Promise<Copy | null> {
  let earlier = known;
  for (let attempt = 0; attempt < env.limits.maxWriteAttempts; attempt++) {
    const source = await env.files.read(from);
    if (!source) return null;
    const copy = (targetEtag: string, created: boolean): Copy => ({
      from,
      to,
      sourceEtag: source.etag,
      targetEtag,
      created,
    });
    try {
      if (!earlier)
        return copy(
          (await env.files.write(to, source.data, { ifNoneMatch: true, origin: run.id, deferNameCheck: true })).etag,
          true,
        );
      if (earlier.origin === run.id && sameBytes(earlier.data, source.data)) return copy(earlier.etag, false);
      return copy(
        (await env.files.write(to, source.data, { ifMatch: earlier.etag, origin: run.id, deferNameCheck: true })).etag,
        false,
      );
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) {
        fate.uncertain = true;
        throw error;
      }
      // A write whose answer was lost (the SDK's retry then met it) is there with our id and the
      // source's bytes; a copy of a run this one took over is rewritten on the next turn; anything
      // else was written by someone else while we copied: theirs now.
      const landed = await env.files.read(to);
      if (landed && landed.origin === run.id && sameBytes(landed.data, source.data)) return copy(landed.etag, !earlier);
      if (landed && (landed.origin === undefined || !run.origins.has(landed.origin)))
        fail('ALREADY_EXISTS', env.messages.destinationExists(run.to));
      earlier = landed ?? undefined;
    }
  }
  fail('CONFLICT', env.messages.conflict(from));
}

/** Whether one of `files` is still a copy written by this rename (read one by one, stopping at the first). */
async function holdsCopyOf(origins: Set<string>, files: ListedFile[], env: TreeEnv): Promise<boolean> {
  for (const file of files) {
    const origin = (await env.files.read(file.path))?.origin;
    if (origin !== undefined && origins.has(origin)) return true;
  }
  return false;
}

/**
 * Take back the copies this run created, each only as it wrote it (an edit made since stays) and
 * only while it still carries this run's id (a run that took this one over rewrote it, and may have
 * moved its source: the ETag alone does not tell on S3, where it is the MD5 of the bytes). Best effort.
 */
async function takeBack(copies: Copy[], op: string, env: TreeEnv): Promise<void> {
  await forEachLimit(copies, DIRECTORY_MOVE_CONCURRENCY, async (c) => {
    if ((await env.files.read(c.to).catch(() => null))?.origin !== op) return;
    await withdrawCopy(c.to, c.targetEtag, op, env).catch(() => undefined);
  });
}
