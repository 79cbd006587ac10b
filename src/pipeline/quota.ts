import { isMemvaultError, MemvaultError } from '../errors.js';
import { ReadWriteLock } from '../util/rw-lock.js';
import { DEFAULT_LIMITS, type CommandLimits } from '../tool/commands/env.js';
import type { MemoryCommand } from '../tool/types.js';
import { MEMORY_ROOT } from '../vault/paths.js';
import type { FileVersion, ListedFile, PathState, UserFiles, WriteCondition } from '../vault/user-files.js';
import type { CommandContext, Middleware } from './context.js';
import type { QuotaDecision, QuotaRule } from './decisions.js';

/**
 * Size quotas: bytes per file, bytes and files per user, and the characters one view returns.
 *
 * How a write is checked. The middleware hands the command a view of the user's files that checks
 * each write at the moment it is made, with exact numbers: the new size is the bytes being written,
 * the old size is the size of the version the command read (an edit's conditional write replaces
 * exactly that version), or one HEAD when the command did not read the file (create). The check and
 * the reservation of the delta happen in one synchronous step, so concurrent writes of one process
 * can never together pass a limit; the reservation is released when the write fails and turned into
 * usage when it succeeds. A refused write throws before anything is written, so the command changes
 * nothing. Deletes and renames adjust usage by the sizes the command itself listed, read or stat'ed.
 *
 * Usage per user (bytes, files) is listed once per process (one LIST per 1,000 files), kept exact
 * in-process from then on, and listed again every `refreshEveryWrites` writes or `refreshAfterMs`,
 * so that what other processes wrote is seen. See docs/paths-and-quotas.md ("Quotas") for the
 * cross-process bound and the requests a check costs.
 */
export interface QuotaOptions {
  /** Bytes one file may hold (plaintext). Also the command layer's `limits.maxFileBytes`. */
  maxFileBytes?: number;
  /** Bytes all of a user's files may hold together (plaintext). */
  maxUserBytes?: number;
  /** Files a user may have. */
  maxUserFiles?: number;
  /** Characters of file text one view returns before it says how to page. Also `limits.viewChars`. */
  viewChars?: number;
  /** Hard cap on everything one view returns (line numbers and notices included). */
  maxViewOutputChars?: number;
  /** List a user's files again after this long, to see other processes' writes. */
  refreshAfterMs?: number;
  /** ... or after this many admitted writes in this process, whichever comes first. */
  refreshEveryWrites?: number;
  /** Users whose usage this process keeps (least recently used beyond that are forgotten). */
  maxCachedUsers?: number;
  /** Clock for the refresh interval (tests inject one). */
  now?: () => number;
  /** Unexpected faults while listing usage (never shown to the model). */
  onInternalError?: (error: unknown, ctx: CommandContext) => void;
}

export type ResolvedQuota = Required<Omit<QuotaOptions, 'now' | 'onInternalError'>>;

export const DEFAULT_QUOTA: ResolvedQuota = {
  maxFileBytes: DEFAULT_LIMITS.maxFileBytes,
  maxUserBytes: 64 * 1024 * 1024,
  maxUserFiles: 5_000,
  viewChars: DEFAULT_LIMITS.viewChars,
  maxViewOutputChars: 2 * DEFAULT_LIMITS.viewChars,
  refreshAfterMs: 60_000,
  refreshEveryWrites: 20,
  maxCachedUsers: 10_000,
};

/** Options filled in with defaults and checked; a bad value is a start-up error (CONFIG). */
export function resolveQuota(options: QuotaOptions = {}): ResolvedQuota {
  const resolved: ResolvedQuota = { ...DEFAULT_QUOTA };
  for (const key of Object.keys(DEFAULT_QUOTA) as Array<keyof ResolvedQuota>) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (key === 'refreshAfterMs' ? 0 : 1)) {
      throw new MemvaultError('CONFIG', `memvault: quota option ${key} must be a positive whole number, not ${String(value)}`);
    }
    resolved[key] = value;
  }
  if (options.viewChars !== undefined && options.maxViewOutputChars === undefined) resolved.maxViewOutputChars = 2 * resolved.viewChars;
  if (resolved.maxViewOutputChars < resolved.viewChars + 200) {
    throw new MemvaultError('CONFIG', 'memvault: quota option maxViewOutputChars must leave room for viewChars of text plus line numbers');
  }
  return resolved;
}

/**
 * The command-layer limits that the quota options own: createVault passes these into `limits`, so
 * that one option sets both the quota check and the command layer's own guard of the same limit.
 */
export function quotaCommandLimits(options: QuotaOptions = {}): Pick<CommandLimits, 'maxFileBytes' | 'viewChars'> {
  const q = resolveQuota(options);
  return { maxFileBytes: q.maxFileBytes, viewChars: q.viewChars };
}

export type { QuotaDecision, QuotaRule } from './decisions.js';

export class QuotaExceededError extends MemvaultError {
  readonly decision: QuotaDecision;
  constructor(message: string, decision: QuotaDecision) {
    super('QUOTA_EXCEEDED', message);
    this.name = 'QuotaExceededError';
    this.decision = decision;
  }
}

const n = (value: number) => value.toLocaleString('en-US');

export const quotaMessages = {
  fileBytes: (path: string, newBytes: number, oldBytes: number | null, limit: number) =>
    `Error: Quota exceeded (bytes per file): ${path} would be ${n(newBytes)} bytes, over the limit of ${n(limit)} bytes per file` +
    (oldBytes === null ? '' : `; it holds ${n(oldBytes)} bytes now, so ${n(Math.max(0, limit - oldBytes))} bytes are left`) +
    `. Nothing was written. Keep each file under ${n(limit)} bytes: split the content across several files, or leave out old content.`,
  userBytes: (command: string, delta: number, used: number, limit: number) =>
    `Error: Quota exceeded (bytes per user): this ${command} needs ${n(delta)} more bytes, but the memory directory holds ${n(used)} of ${n(limit)} bytes ` +
    `(${n(Math.max(0, limit - used))} bytes left). Nothing was written. Free space first: delete or shorten files you no longer need ` +
    `(view /memories shows their sizes), then try again.`,
  userFiles: (path: string, files: number, limit: number) =>
    `Error: Quota exceeded (files per user): creating ${path} would make ${n(files + 1)} files, over the limit of ${n(limit)} files ` +
    `(there are ${n(files)}, ${n(Math.max(0, limit - files))} left). Nothing was written. Delete or merge files you no longer need, ` +
    `or add this to an existing file, then try again.`,
  viewCapped: (cap: number, lastLine: number | null) =>
    lastLine === null
      ? `[Output capped at ${n(cap)} characters. View a subdirectory, or a file with view_range, to see the rest.]`
      : `[Output capped at ${n(cap)} characters (line numbers included), after line ${lastLine}. To read on, call view with view_range [${lastLine + 1}, -1] (or a smaller range).]`,
} as const;

interface UserUsage {
  /** Bytes and files as last listed, plus this process's own admitted changes since. */
  bytes: number;
  files: number;
  /** Reserved by writes in flight. */
  pendingBytes: number;
  pendingFiles: number;
  refreshedAt: number;
  writesSinceRefresh: number;
  /** Set when a change of unknown size happened: list again before the next check. */
  stale: boolean;
  loaded: boolean;
  /** Per-user shared/exclusive gate: commands hold it shared, a usage refresh exclusively (FIFO). */
  readonly gate: ReadWriteLock;
}

/** A snapshot of one user's usage as this process sees it (tests and metrics). */
export interface UsageSnapshot {
  bytes: number;
  files: number;
  pendingBytes: number;
  pendingFiles: number;
}

const WRITING_COMMANDS = new Set<MemoryCommand['command']>(['create', 'str_replace', 'insert']);

/**
 * The UserFiles a command sees under the quota middleware: reads, stats and listings remember the
 * sizes they saw (for free), writes and deletes are checked and accounted with them.
 */
class QuotaFiles implements UserFiles {
  constructor(
    private readonly inner: UserFiles,
    private readonly run: QuotaRun,
  ) {}

  get uid(): string {
    return this.inner.uid;
  }

  async read(path: string): Promise<FileVersion | null> {
    const file = await this.inner.read(path);
    this.run.seen(path, file ? file.data.byteLength : null);
    return file;
  }

  async stat(path: string): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    const info = await this.inner.stat(path);
    if (path !== MEMORY_ROOT) this.run.seen(path, info ? info.size : null);
    return info;
  }

  isDirectory(path: string): Promise<boolean> {
    return this.inner.isDirectory(path);
  }

  assertStorable(path: string): void {
    this.inner.assertStorable(path);
  }

  async *listFiles(dir: string): AsyncIterable<ListedFile> {
    for await (const file of this.inner.listFiles(dir)) {
      this.run.seen(file.path, file.size);
      yield file;
    }
  }

  async write(path: string, data: Uint8Array, condition: WriteCondition = {}): Promise<{ etag: string }> {
    // An If-None-Match write only succeeds where no file was; otherwise the size of the version
    // read (If-Match replaces exactly it) or, failing that, one HEAD.
    const oldBytes = condition.ifNoneMatch ? null : this.run.known.has(path) ? this.run.known.get(path)! : ((await this.inner.stat(path))?.size ?? null);
    const reservation = this.run.admit(path, data.byteLength, oldBytes);
    let result: { etag: string };
    try {
      result = await this.inner.write(path, data, condition);
    } catch (error) {
      this.run.release(reservation);
      throw error;
    }
    this.run.commit(reservation);
    this.run.seen(path, data.byteLength);
    return result;
  }

  inspect(path: string): Promise<PathState> {
    return this.inner.inspect(path);
  }

  /** A fenced file is gone for the user (its marker is not a file): accounted as a delete. */
  async fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<{ etag: string }> {
    const result = await this.inner.fence(path, ifMatch, reason, op);
    this.run.removed(path);
    return result;
  }

  async remove(path: string, condition: { ifMatch?: string } = {}): Promise<void> {
    await this.inner.remove(path, condition);
    this.run.removed(path);
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    const result = await this.inner.removeMany(paths);
    const failed = new Set(result.failed);
    for (const path of paths) if (!failed.has(path)) this.run.removed(path);
    return result;
  }
}

interface Reservation {
  bytes: number;
  files: number;
  delta: number;
  newFile: boolean;
}

/** One command's view of one user's usage. */
class QuotaRun {
  /** Sizes this command saw, by path (null: no file there). */
  readonly known = new Map<string, number | null>();

  constructor(
    private readonly usage: UserUsage,
    private readonly limits: ResolvedQuota,
    private readonly ctx: CommandContext,
    private readonly command: MemoryCommand,
  ) {}

  seen(path: string, size: number | null): void {
    this.known.set(path, size);
  }

  /** Checks a write and reserves its delta, in one synchronous step; throws when it would cross a limit. */
  admit(path: string, newBytes: number, oldBytes: number | null): Reservation {
    const u = this.usage;
    const newFile = oldBytes === null;
    const delta = newBytes - (oldBytes ?? 0);
    // A rename moves bytes that are already counted: its writes are accounted, never refused.
    if (this.command.command !== 'rename') {
      const l = this.limits;
      if (newBytes > l.maxFileBytes) {
        this.refuse(quotaMessages.fileBytes(path, newBytes, oldBytes, l.maxFileBytes), {
          rule: 'file_bytes',
          limit: l.maxFileBytes,
          used: oldBytes ?? 0,
          delta,
        });
      }
      if (newFile && u.files + u.pendingFiles + 1 > l.maxUserFiles) {
        this.refuse(quotaMessages.userFiles(path, u.files + u.pendingFiles, l.maxUserFiles), {
          rule: 'user_files',
          limit: l.maxUserFiles,
          used: u.files + u.pendingFiles,
          delta: 1,
        });
      }
      const used = u.bytes + u.pendingBytes;
      if (delta > 0 && used + delta > l.maxUserBytes) {
        this.refuse(quotaMessages.userBytes(this.command.command, delta, used, l.maxUserBytes), { rule: 'user_bytes', limit: l.maxUserBytes, used, delta });
      }
      this.decide({ checked: true, rule: 'user_bytes', limit: l.maxUserBytes, used, delta, allowed: true });
    }
    const reservation = { bytes: Math.max(0, delta), files: newFile ? 1 : 0, delta, newFile };
    u.pendingBytes += reservation.bytes;
    u.pendingFiles += reservation.files;
    return reservation;
  }

  release(r: Reservation): void {
    this.usage.pendingBytes -= r.bytes;
    this.usage.pendingFiles -= r.files;
  }

  commit(r: Reservation): void {
    this.release(r);
    this.usage.bytes += r.delta;
    this.usage.files += r.files;
    if (this.command.command !== 'rename') this.usage.writesSinceRefresh += 1;
  }

  removed(path: string): void {
    const size = this.known.get(path);
    if (size === undefined) {
      // A delete of a file this command never sized: only a new listing can tell what it freed.
      this.usage.stale = true;
    } else if (size !== null) {
      this.usage.bytes -= size;
      this.usage.files -= 1;
    }
    this.known.set(path, null);
  }

  private decide(decision: QuotaDecision): void {
    this.ctx.decisions.quota = decision;
  }

  private refuse(message: string, d: { rule: QuotaRule; limit: number; used: number; delta: number }): never {
    const decision: QuotaDecision = { checked: true, ...d, allowed: false };
    this.decide(decision);
    throw new QuotaExceededError(message, decision);
  }
}

export interface QuotaMiddleware extends Middleware {
  readonly limits: ResolvedQuota;
  /** This process's view of a user's usage, by uid (undefined until a write listed it). */
  usage(uid: string): UsageSnapshot | undefined;
}

/** Cuts a view's output that is over the hard cap at a line boundary, with a note on how to page. */
export function capViewOutput(content: string, cap: number): string {
  if (content.length <= cap) return content;
  // Leave room for the note; never cut inside a line.
  const room = cap - 200;
  const cut = content.lastIndexOf('\n', room);
  const kept = content.slice(0, cut > 0 ? cut : room);
  const lastLine = /\n\s*(\d+)\t[^\n]*$/.exec(kept);
  return `${kept}\n${quotaMessages.viewCapped(cap, lastLine ? Number(lastLine[1]) : null)}`;
}

/** The quota middleware. It sits between the path guard (and PII redaction) and the commands. */
export function quota(options: QuotaOptions = {}): QuotaMiddleware {
  const limits = resolveQuota(options);
  const now = options.now ?? Date.now;
  const users = new Map<string, UserUsage>();

  const stateOf = (uid: string): UserUsage => {
    let state = users.get(uid);
    if (state) {
      // Least recently used order: the Map keeps insertion order.
      users.delete(uid);
      users.set(uid, state);
      return state;
    }
    state = {
      bytes: 0,
      files: 0,
      pendingBytes: 0,
      pendingFiles: 0,
      refreshedAt: 0,
      writesSinceRefresh: 0,
      stale: false,
      loaded: false,
      gate: new ReadWriteLock(),
    };
    users.set(uid, state);
    for (const [key, other] of users) {
      if (users.size <= limits.maxCachedUsers) break;
      if (other !== state && other.gate.idle && other.pendingBytes === 0 && other.pendingFiles === 0) users.delete(key);
    }
    return state;
  };

  const due = (u: UserUsage) => !u.loaded || u.stale || u.writesSinceRefresh >= limits.refreshEveryWrites || now() - u.refreshedAt >= limits.refreshAfterMs;

  /** Lists the user's files (inside the command, so the requests are counted) when usage is due. */
  const refresh = async (ctx: CommandContext, u: UserUsage): Promise<void> => {
    if (!due(u)) return;
    const release = await u.gate.acquire(true);
    try {
      if (!due(u)) return; // someone else refreshed while we waited
      let bytes = 0;
      let files = 0;
      for await (const file of ctx.files.listFiles(MEMORY_ROOT)) {
        bytes += file.size;
        files += 1;
      }
      Object.assign(u, { bytes, files, refreshedAt: now(), writesSinceRefresh: 0, stale: false, loaded: true });
    } finally {
      release();
    }
  };

  const middleware: Middleware = async (ctx, next) => {
    const command = ctx.command;
    if (!command || !ctx.pathsCanonical) return next();

    if (command.command === 'view') {
      const result = await next();
      if (result.isError || typeof result.content !== 'string') return result;
      const truncated = result.content.length > limits.maxViewOutputChars;
      ctx.decisions.quota = {
        checked: true,
        rule: 'view_chars',
        limit: limits.maxViewOutputChars,
        used: result.content.length,
        delta: 0,
        allowed: true,
        truncated,
      } satisfies QuotaDecision;
      return truncated ? { ...result, content: capViewOutput(result.content, limits.maxViewOutputChars) } : result;
    }

    // Refused from the input alone, before any request: a create bigger than a file may be.
    if (command.command === 'create') {
      const bytes = Buffer.byteLength(command.file_text, 'utf8');
      if (bytes > limits.maxFileBytes) {
        const decision: QuotaDecision = { checked: true, rule: 'file_bytes', limit: limits.maxFileBytes, used: 0, delta: bytes, allowed: false };
        ctx.decisions.quota = decision;
        return { content: quotaMessages.fileBytes(command.path, bytes, null, limits.maxFileBytes), isError: true, code: 'QUOTA_EXCEEDED' };
      }
    }

    const writes = WRITING_COMMANDS.has(command.command);
    // A delete or rename before this process knows the user's usage needs no accounting: the first
    // listing will see its outcome.
    if (!writes && !users.has(ctx.uid)) {
      ctx.decisions.quota = { checked: false } satisfies QuotaDecision;
      return next();
    }
    const usage = stateOf(ctx.uid);
    if (writes) {
      try {
        await refresh(ctx, usage);
      } catch (error) {
        // The boundary answers it; a host that composed its own quota hears of the fault here.
        if (!isMemvaultError(error)) options.onInternalError?.(error, ctx);
        throw error;
      }
    }
    ctx.decisions.quota = { checked: false } satisfies QuotaDecision;
    const release = await usage.gate.acquire(false);
    const mutable = ctx as { files: UserFiles };
    const original = mutable.files;
    // The command's files, seen through the quota: the only way to check a write with its exact size.
    mutable.files = new QuotaFiles(original, new QuotaRun(usage, limits, ctx, command));
    try {
      return await next();
    } finally {
      mutable.files = original;
      release();
    }
  };

  return Object.assign(middleware, {
    limits,
    usage: (uid: string): UsageSnapshot | undefined => {
      const u = users.get(uid);
      return u?.loaded ? { bytes: u.bytes, files: u.files, pendingBytes: u.pendingBytes, pendingFiles: u.pendingFiles } : undefined;
    },
  });
}
