/**
 * The journal of a directory rename: how one starts (create-only), how another instance claims a
 * stopped one, and how a running one keeps it alive. docs/s3.md, "Directory rename journals".
 */
import { createHash, randomBytes } from 'node:crypto';
import { PreconditionFailedError } from '../user-files.js';
import type { TreeFileVersion } from '../tree-files.js';
import { isWithin, MEMORY_ROOT } from '../paths.js';
import { fail, type TreeEnv } from './env.js';
import { processIsGone, runnerOf, silentFor, thisProcess, type RunnerProcess } from './runner.js';

/**
 * memvault's own bookkeeping lives in a reserved hidden directory of the user's tree, so that it is
 * encrypted and erased like the user's files. The path guard refuses it to the model.
 */
export const RESERVED_DIR = `${MEMORY_ROOT}/.memvault`;

/** A journal older than this is ignored (and replaced): a rename is resumed soon after it failed, or not at all. */
export const RENAME_JOURNAL_TTL_MS = 24 * 60 * 60 * 1000;
export const JOURNAL_DIR = `${RESERVED_DIR}/renames`;

/**
 * A journal whose store timestamp is this much older than `resumeAfterMs` by this process's clock
 * is silent even at its first sighting (a rename stopped long ago is finished by the first instance
 * that meets it). Well above the whole second the store rounds to and any sane clock skew; a live
 * runner's journal is never older than a quarter of `resumeAfterMs` (its heartbeat).
 */
const STORE_CLOCK_SLACK_MS = 60_000;

/**
 * The journal of a directory rename or delete lives at a path derived from the directory it
 * changes (not from the destination): two renames of one directory contend for one key, and the
 * create-only PUT of the journal lets exactly one of them start (the server decides, not a DELETE).
 */
export function journalPath(dir: string): string {
  const id = createHash('sha256').update(`tree\u0000${dir}`).digest('hex').slice(0, 32);
  return `${JOURNAL_DIR}/${id}`;
}

export interface TreeJournal {
  /**
   * Random, per run: the `origin` of every copy this run writes and the op of its fence markers.
   * A claim gives the journal a new one, so that a claimer tells its own copies and markers from
   * those of the run it took over (which may wake up and go on).
   */
  id: string;
  /** The ids of the runs before a claim: their copies are this rename's too. */
  earlier?: string[];
  op: 'rename' | 'delete';
  from: string;
  /** A rename's destination. */
  to?: string;
  /** The vault instance that runs it (runnerOf): only it resumes the journal before its runner is known gone. */
  runner?: string;
  /** The runner's process, for a same-host liveness check. */
  process?: RunnerProcess;
  /** The heartbeat's counter (changes with every beat: what an observer watches). */
  beat?: number;
}

const ID = /^[0-9a-f]{32}$/;
/** A journal's JSON as UTF-8 (invalid bytes, a NUL or a BOM make it unparsable: damaged, not resumable). */
const JOURNAL_TEXT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const JOURNAL_BYTES = new TextEncoder();
/** Claims a journal remembers; past this many the rename cannot be resumed any more (its copies are still whole). */
const MAX_EARLIER = 64;

function parseProcess(value: unknown): RunnerProcess | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Partial<RunnerProcess>;
  if (typeof v.host !== 'string' || !Number.isSafeInteger(v.pid)) return undefined;
  return { host: v.host, pid: v.pid!, ...(typeof v.start === 'string' ? { start: v.start } : {}) };
}

export function parseJournal(file: TreeFileVersion | null): TreeJournal | null {
  if (!file || Date.now() - file.lastModified.getTime() > RENAME_JOURNAL_TTL_MS) return null;
  return journalOf(file);
}

/** The journal a file holds, whatever its age (whose run holds it: a run longer than the TTL still knows its own). */
function journalOf(file: TreeFileVersion | null): TreeJournal | null {
  if (!file) return null;
  try {
    const v = JSON.parse(JOURNAL_TEXT.decode(file.data)) as Partial<TreeJournal>;
    const op = v.op ?? (typeof v.to === 'string' ? 'rename' : undefined);
    if (
      typeof v.id !== 'string' ||
      !ID.test(v.id) ||
      typeof v.from !== 'string' ||
      (op !== 'rename' && op !== 'delete')
    )
      return null;
    if (op === 'rename' && typeof v.to !== 'string') return null;
    if (
      v.earlier !== undefined &&
      (!Array.isArray(v.earlier) ||
        v.earlier.length > MAX_EARLIER ||
        !v.earlier.every((e) => typeof e === 'string' && ID.test(e)))
    )
      return null;
    const runnerProcess = parseProcess(v.process);
    return {
      id: v.id,
      op,
      from: v.from,
      ...(op === 'rename' ? { to: v.to! } : {}),
      ...(v.earlier !== undefined && v.earlier.length > 0 ? { earlier: v.earlier } : {}),
      ...(typeof v.runner === 'string' ? { runner: v.runner } : {}),
      ...(runnerProcess ? { process: runnerProcess } : {}),
      ...(Number.isSafeInteger(v.beat) ? { beat: v.beat } : {}),
    };
  } catch {
    return null; // damaged: not resumable
  }
}

/** Every id a copy of this rename may carry as its origin (this run's and the claimed runs'). */
export function originsOf(journal: TreeJournal): Set<string> {
  return new Set([journal.id, ...(journal.earlier ?? [])]);
}

export interface FoundJournal {
  journal: TreeJournal | null;
  file: TreeFileVersion | null;
}

/**
 * The live journal at `path`, or null: a journal that is missing, older than the TTL, of another
 * format (the pre-id format could not tell its copies apart) or damaged is not resumable.
 */
export async function openJournal(path: string, env: TreeEnv): Promise<FoundJournal> {
  const file = await env.files.read(path);
  return { journal: parseJournal(file), file };
}

/**
 * Whether this instance may take over another runner's journal: its process is known gone (same
 * host), or the journal has been silent for `resumeAfterMs` (its beat unchanged, watched by this
 * instance's clock; or stamped by the store long before that, past any clock skew).
 */
export function runnerIsGone(found: FoundJournal, path: string, env: TreeEnv): boolean {
  const { journal, file } = found;
  if (journal === null || file === null) return false;
  if (processIsGone(journal.process)) return true;
  const silent = silentFor(
    env,
    `${env.files.uid}\u0000${path}`,
    `${journal.id}/${journal.beat ?? 0}`,
    env.limits.resumeAfterMs,
  );
  return silent || Date.now() - file.lastModified.getTime() > env.limits.resumeAfterMs + STORE_CLOCK_SLACK_MS;
}

export function busy(path: string, other: TreeJournal | null, env: Pick<TreeEnv, 'messages'>): never {
  fail(
    'CONFLICT',
    other === null
      ? env.messages.treeBusy(path)
      : other.op === 'rename'
        ? env.messages.treeBusyRename(path, other.from, other.to!)
        : env.messages.treeBusyDelete(path, other.from),
  );
}

export type TreeOperation = Pick<TreeJournal, 'op' | 'from' | 'to'>;

export function sameOperation(a: TreeJournal, b: TreeOperation): boolean {
  return a.op === b.op && a.from === b.from && a.to === b.to;
}

/** Whether two tree operations touch a common path (one's source or destination within the other's). */
function overlaps(a: TreeOperation, b: TreeJournal): boolean {
  const pa = [a.from, ...(a.to !== undefined ? [a.to] : [])];
  const pb = [b.from, ...(b.to !== undefined ? [b.to] : [])];
  return pa.some((p) => pb.some((q) => isWithin(p, q) || isWithin(q, p)));
}

export interface HeldJournal {
  path: string;
  journal: TreeJournal;
  etag: string;
  /** Written by this run (false: an earlier run's, being resumed). */
  fresh: boolean;
}

async function putJournal(
  path: string,
  journal: TreeJournal,
  condition: { ifMatch: string } | { ifNoneMatch: true },
  env: TreeEnv,
  from: string,
): Promise<string> {
  try {
    return (
      await env.files.write(path, JOURNAL_BYTES.encode(JSON.stringify(journal)), { ...condition, deferNameCheck: true })
    ).etag;
  } catch (error) {
    if (error instanceof PreconditionFailedError) busy(from, parseJournal(await env.files.read(path)), env);
    throw error;
  }
}

/**
 * Start (or resume) a tree operation: its journal is created `If-None-Match: *` (or over a stale
 * one `If-Match`), so of two operations on one directory exactly one starts; the other gets a clear
 * error. Another runner's journal is claimed `If-Match` under a new id (the linearisation point of
 * a take-over: every copy the old runner writes after it is not this run's, and every step the old
 * runner takes is conditional on an object this run rewrites first; tree.ts). Then, as for names
 * (src/vault/names.ts), write, then check: every other live journal is read, and one whose paths
 * overlap ours (a rename of a parent, of a child, into or out of ours) makes us withdraw ours and
 * refuse: of two overlapping operations at least one sees the other.
 */
export async function holdJournal(op: TreeOperation, found: FoundJournal, env: TreeEnv): Promise<HeldJournal> {
  const path = journalPath(op.from);
  const mine = { runner: runnerOf(env), process: thisProcess() };
  let held: HeldJournal;
  if (found.journal) {
    if (!sameOperation(found.journal, op)) busy(op.from, found.journal, env);
    if (found.journal.runner === mine.runner)
      held = { path, journal: found.journal, etag: found.file!.etag, fresh: false };
    else {
      const earlier = [...(found.journal.earlier ?? []), found.journal.id];
      if (earlier.length > MAX_EARLIER) busy(op.from, found.journal, env);
      const journal: TreeJournal = { id: randomBytes(16).toString('hex'), earlier, ...op, ...mine };
      held = {
        path,
        journal,
        etag: await putJournal(path, journal, { ifMatch: found.file!.etag }, env, op.from),
        fresh: false,
      };
    }
  } else {
    const journal: TreeJournal = { id: randomBytes(16).toString('hex'), ...mine, ...op };
    const condition = found.file ? { ifMatch: found.file.etag } : { ifNoneMatch: true as const };
    held = { path, journal, etag: await putJournal(path, journal, condition, env, op.from), fresh: true };
  }
  for await (const file of env.files.listFiles(JOURNAL_DIR)) {
    if (file.path === path || Date.now() - file.lastModified.getTime() > RENAME_JOURNAL_TTL_MS) continue;
    const other = parseJournal(await env.files.read(file.path));
    if (other && overlaps(op, other)) {
      if (held.fresh) await env.files.remove(path, { ifMatch: held.etag }).catch(() => undefined);
      busy(op.from, other, env);
    }
  }
  return held;
}

/**
 * While a directory rename runs, its journal is rewritten (`If-Match`, with the next `beat` each
 * time) every quarter of `limits.resumeAfterMs`. Another instance takes a journal for a dead run's
 * only once it has seen one beat for `resumeAfterMs`, so a live rename is never resumed beside
 * itself, however long it runs. A beat that loses its condition to another run's journal means this
 * run stalled past `resumeAfterMs` and was claimed: it stops before its next file (`assertHeld`);
 * every step it had under way is conditional on an object the claimer changes, so it fails safely.
 */
export class JournalHeartbeat {
  private etag: string;
  private beats: number;
  private claimedBy: TreeJournal | null | undefined;
  private beating: Promise<void> | undefined;
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly held: HeldJournal,
    private readonly env: TreeEnv,
  ) {
    this.etag = held.etag;
    this.beats = held.journal.beat ?? 0;
    if (env.limits.resumeAfterMs > 0) {
      this.timer = setInterval(() => void this.beat(), Math.max(JOURNAL_BEAT_MIN_MS, env.limits.resumeAfterMs / 4));
      this.timer.unref?.();
    }
  }

  /** Whether another run has claimed the journal (this one then leaves it alone). */
  get claimed(): boolean {
    return this.claimedBy !== undefined;
  }

  /** The spec's busy error, naming the claimer's operation, once another run has claimed the journal. */
  assertHeld(): void {
    if (this.claimedBy !== undefined) busy(this.held.journal.from, this.claimedBy, this.env);
  }

  private beat(): Promise<void> {
    this.beating ??= (async () => {
      const record = JOURNAL_BYTES.encode(JSON.stringify({ ...this.held.journal, beat: ++this.beats }));
      try {
        this.etag = (
          await this.env.files.write(this.held.path, record, { ifMatch: this.etag, deferNameCheck: true })
        ).etag;
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) return; // store unreachable: the next beat tries again
        // Our own beat whose answer was lost (the SDK's retry met it), or another run's journal.
        const now = await this.env.files.read(this.held.path).catch(() => undefined);
        if (now === undefined) return;
        const journal = journalOf(now);
        if (now !== null && journal?.id === this.held.journal.id && journal.runner === this.held.journal.runner)
          this.etag = now.etag;
        else this.claimedBy = journal;
      }
    })().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /**
   * Whether another run has claimed the journal, read from the store now (not only as the last beat
   * found it): a refused run takes its copies back only while none has.
   */
  async checkClaimed(): Promise<boolean> {
    await this.beating;
    if (this.claimedBy !== undefined) return true;
    try {
      const journal = journalOf(await this.env.files.read(this.held.path));
      if (journal?.id !== this.held.journal.id) this.claimedBy = journal;
      return this.claimedBy !== undefined;
    } catch {
      return true; // not known: taken as claimed, so nothing is taken back
    }
  }

  /** Stop beating, once a beat on its way has landed. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.beating;
  }

  /**
   * Drop the journal: the rename is done. Read first: a run that was claimed meanwhile leaves the
   * claimer's journal alone and says it was taken over. Then one plain DELETE (a DELETE `If-Match`
   * is two requests where the store does not decide it, and a crash between them would leave
   * neither the journal nor a way to tell the rename was done). Only a pause of resumeAfterMs
   * between the two could delete a claimer's journal: that run then goes on without one (each file
   * still whole at one place or both, as after a crash).
   */
  async finish(): Promise<void> {
    await this.stop();
    this.assertHeld();
    const journal = journalOf(await this.env.files.read(this.held.path));
    if (journal?.id !== this.held.journal.id) busy(this.held.journal.from, journal, this.env);
    await this.env.files.remove(this.held.path);
  }

  /** Drop the journal of a refused run (best effort, only as this run last wrote it). */
  async withdraw(): Promise<void> {
    await this.stop();
    if (!this.claimed) await this.env.files.remove(this.held.path, { ifMatch: this.etag }).catch(() => undefined);
  }
}

/** The shortest interval between two beats of a journal, whatever `resumeAfterMs` says. */
const JOURNAL_BEAT_MIN_MS = 100;
