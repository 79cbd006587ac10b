import type { MemoryCommand } from '../tool/types.js';
import type { CommandContext } from './context.js';
import type { QuotaDecision, QuotaRule } from './decisions.js';
import { QuotaExceededError, quotaMessages } from './quota-messages.js';
import { HISTORY_PRUNE_TO, type ResolvedQuota } from './quota-options.js';
import type { TreeFiles } from '../vault/tree-files.js';
import { versionCost } from '../vault/history-usage.js';
import type { UserUsage } from './quota-usage.js';

/**
 * Limits and decision: one command's checks against one user's usage. A write is admitted and its
 * delta reserved in one synchronous step (so concurrent writes of one process never pass a limit
 * together), released when it fails, turned into usage when it succeeds; the decision is recorded
 * on the context.
 */
export interface Reservation {
  bytes: number;
  files: number;
  delta: number;
  newFile: boolean;
  /** What the write's kept version adds to the history (0 with history off): its cost (versionCost) and one version. */
  history: number;
  versions: number;
}

/** What kept versions add to the history: their cost (versionCost) and their count. */
interface HistoryAdds {
  bytes: number;
  versions: number;
}

/** What the version a write of `newBytes` keeps adds (null: none, as for a tombstone already counted). */
function addsOf(newBytes: number | null): HistoryAdds {
  return newBytes === null ? { bytes: 0, versions: 0 } : { bytes: versionCost(newBytes), versions: 1 };
}

/** One command's view of one user's usage. */
export class QuotaRun {
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

  /**
   * The checks of a write that no pruning can make pass (bytes per file, files and bytes per user):
   * throws when it would cross one, changing nothing. A rename moves bytes that are already counted:
   * its writes are accounted, never refused (the history's room for it was checked before it
   * started: admitRename).
   */
  check(path: string, newBytes: number, oldBytes: number | null): void {
    if (this.command.command === 'rename') return;
    const u = this.usage;
    const l = this.limits;
    const newFile = oldBytes === null;
    const delta = newBytes - (oldBytes ?? 0);
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
      this.refuse(quotaMessages.userBytes(this.command.command, delta, used, l.maxUserBytes), {
        rule: 'user_bytes',
        limit: l.maxUserBytes,
        used,
        delta,
      });
    }
  }

  /**
   * Checks a write (check, then the history's allowance, which the caller made room in first:
   * pruneHistory) and reserves its delta, in one synchronous step; throws when it would cross a limit.
   */
  admit(path: string, newBytes: number, oldBytes: number | null): Reservation {
    const u = this.usage;
    const newFile = oldBytes === null;
    const delta = newBytes - (oldBytes ?? 0);
    if (this.command.command !== 'rename') {
      const l = this.limits;
      this.check(path, newBytes, oldBytes);
      if (this.historyOverflows(newBytes)) {
        const cost = versionCost(newBytes);
        const kept = u.historyBytes! + u.pendingHistoryBytes;
        if (kept + cost > l.maxHistoryBytes) {
          this.refuse(quotaMessages.historyBytes(this.command.command, newBytes, cost, kept, l.maxHistoryBytes), {
            rule: 'history_bytes',
            limit: l.maxHistoryBytes,
            used: kept,
            delta: cost,
          });
        }
        const versions = u.historyVersions + u.pendingHistoryVersions;
        this.refuse(quotaMessages.historyVersions(this.command.command, versions, l.maxHistoryVersions), {
          rule: 'history_versions',
          limit: l.maxHistoryVersions,
          used: versions,
          delta: 1,
        });
      }
      const used = u.bytes + u.pendingBytes;
      this.decide({ checked: true, rule: 'user_bytes', limit: l.maxUserBytes, used, delta, allowed: true });
    }
    const keeps = u.historyBytes !== null;
    const reservation = {
      bytes: Math.max(0, delta),
      files: newFile ? 1 : 0,
      delta,
      newFile,
      history: keeps ? versionCost(newBytes) : 0,
      versions: keeps ? 1 : 0,
    };
    u.pendingBytes += reservation.bytes;
    u.pendingFiles += reservation.files;
    u.pendingHistoryBytes += reservation.history;
    u.pendingHistoryVersions += reservation.versions;
    return reservation;
  }

  /**
   * Whether the history would be past its allowance (bytes or versions) with what it holds, what
   * writes in flight reserved and, given `newBytes`, the version a write of that many bytes keeps
   * (never with history off).
   */
  historyOverflows(newBytes: number | null): boolean {
    return this.overflowsBy(addsOf(newBytes));
  }

  private overflowsBy(adds: HistoryAdds): boolean {
    const u = this.usage;
    if (u.historyBytes === null) return false;
    return (
      u.historyBytes + u.pendingHistoryBytes + adds.bytes > this.limits.maxHistoryBytes ||
      u.historyVersions + u.pendingHistoryVersions + adds.versions > this.limits.maxHistoryVersions
    );
  }

  /**
   * Drop the oldest versions down to the low-water mark of bytes and of versions (history-usage.ts),
   * or lower when the version about to be kept (a write of `newBytes`, beside what other writes
   * reserved) needs more room, and take the count the listing found.
   */
  pruneHistory(files: TreeFiles, newBytes: number | null): Promise<void> {
    return this.pruneFor(files, addsOf(newBytes));
  }

  private async pruneFor(files: TreeFiles, adds: HistoryAdds): Promise<void> {
    const l = this.limits;
    const u = this.usage;
    const lowWater = (limit: number, pending: number, adding: number) =>
      Math.max(0, Math.min(Math.floor(limit * HISTORY_PRUNE_TO), limit - pending - adding));
    const target = {
      bytes: lowWater(l.maxHistoryBytes, u.pendingHistoryBytes, adds.bytes),
      versions: lowWater(l.maxHistoryVersions, u.pendingHistoryVersions, adds.versions),
    };
    const left = await files.historyUsage?.(target);
    if (left) Object.assign(u, { historyBytes: left.bytes, historyVersions: left.versions });
  }

  /**
   * A rename keeps two versions at least (the copy's and the source's tombstone) and leaves a
   * tombstone no pruning may drop, so a run of renames to new names would grow the history without
   * bound: before it starts, the history must have room for those two (after dropping the oldest
   * versions), or the rename is refused and changes nothing. What a directory rename keeps beyond
   * them is accounted as it is written, never refused half-way (its journal would be left to finish).
   */
  async admitRename(files: TreeFiles): Promise<void> {
    const adds = { bytes: 2 * versionCost(0), versions: 2 };
    if (!this.overflowsBy(adds)) return;
    await this.pruneFor(files, adds);
    if (!this.overflowsBy(adds)) return;
    const u = this.usage;
    const l = this.limits;
    const kept = u.historyBytes! + u.pendingHistoryBytes;
    if (kept + adds.bytes > l.maxHistoryBytes) {
      this.refuse(quotaMessages.historyBytesForRename(adds.bytes, kept, l.maxHistoryBytes), {
        rule: 'history_bytes',
        limit: l.maxHistoryBytes,
        used: kept,
        delta: adds.bytes,
      });
    }
    const versions = u.historyVersions + u.pendingHistoryVersions;
    this.refuse(quotaMessages.historyVersions('rename', versions, l.maxHistoryVersions, adds.versions), {
      rule: 'history_versions',
      limit: l.maxHistoryVersions,
      used: versions,
      delta: adds.versions,
    });
  }

  /**
   * A file's end was recorded (a delete's or a rename's tombstone, once settled): it counts like
   * any kept version; when that takes the history past its allowance, the oldest versions go, which
   * now include the version the tombstone ended (no longer its file's newest). Best effort: the
   * file is deleted either way, and the next write prunes or refuses.
   */
  async tombstoneKept(files: TreeFiles): Promise<void> {
    const u = this.usage;
    if (u.historyBytes === null) return;
    u.historyBytes += versionCost(0);
    u.historyVersions += 1;
    if (this.historyOverflows(null)) await this.pruneHistory(files, null).catch(() => undefined);
  }

  /**
   * A write admitted as a new file (QuotaFiles.admit) replaced a file of `replaced` bytes: the
   * reservation it holds becomes the exact one (fewer bytes, no file added), and the recorded
   * decision says the delta that was written.
   */
  resettle(r: Reservation, newBytes: number, replaced: number): Reservation {
    const delta = newBytes - replaced;
    const exact: Reservation = {
      bytes: Math.max(0, delta),
      files: 0,
      delta,
      newFile: false,
      history: r.history,
      versions: r.versions,
    };
    this.usage.pendingBytes += exact.bytes - r.bytes;
    this.usage.pendingFiles += exact.files - r.files;
    const decision = this.ctx.decisions.quota;
    if (decision?.checked) this.decide({ ...decision, delta });
    return exact;
  }

  release(r: Reservation): void {
    this.usage.pendingBytes -= r.bytes;
    this.usage.pendingFiles -= r.files;
    this.usage.pendingHistoryBytes -= r.history;
    this.usage.pendingHistoryVersions -= r.versions;
  }

  commit(r: Reservation): void {
    this.release(r);
    this.landed(r);
  }

  /** A write reserved so (and released when it seemed to fail) is known to have landed: its delta is usage. */
  landed(r: Reservation): void {
    this.usage.bytes += r.delta;
    this.usage.files += r.files;
    if (this.usage.historyBytes !== null) {
      this.usage.historyBytes += r.history;
      this.usage.historyVersions += r.versions;
    }
    if (this.command.command !== 'rename') this.usage.writesSinceRefresh += 1;
  }

  /** A change whose outcome or size is unknown: only a new listing can tell, before the next check. */
  outcomeUnknown(): void {
    this.usage.stale = true;
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
