/**
 * The history checker's rules, over the merged logs of every worker and the final state.
 *
 * An operation is `acknowledged` when its worker logged an answer; one in flight when its process
 * was killed has none and is given until the kill plus KILL_SLACK_MS (its requests may still land).
 * An operation may have changed the store (`effective`) when it succeeded, was cut off, or failed
 * with an error that does not promise "nothing changed". Real-time overlap allows either order:
 * an operation may explain a state only if its interval does not end before the other begins.
 *
 * Rules:
 * 1. Every acknowledged insert is in the final state, unless a delete, an overwriting create or a
 *    sweep of a path its file may have reached (through renames that did not end before it) came
 *    after it or overlapped it (a sweep only if it ran SWEEP_IDLE_MS after it: it deletes idle files).
 * 2. Nothing comes back after an acknowledged delete: a file below a deleted path at the end was
 *    created, or renamed into that directory, by an operation that did not end before the delete began.
 * 3. Every file is at exactly one place, unless renames that did not succeed (cut off, or failed
 *    mid-way) join the two places: a rename that reported success leaves no copy behind.
 * 4. A read sees every insert into its path acknowledged before it began, unless an operation that
 *    moves, deletes, replaces or sweeps that path overlapped the two; and never a token from the future.
 * 5. The history keeps every acknowledged insert (`checkKept`): its token is in a kept version or in
 *    the final state, unless a sweep may have expired its file (an expired file's versions go too).
 *
 * A restore puts the user back as of its `asOf`: it may undo what ended after `asOf` (an insert, a
 * delete, a rename) if it did not end before that began, so it explains a lost insert, a file back
 * after a delete, a file at two places or a read that missed an insert in the same way.
 */
import { SWEEP_IDLE_MS, type LogRecord, type Op } from './model.js';

export const KILL_SLACK_MS = 3_000;
/** S3 LastModified has whole seconds; the sweep's idle rule gets that much slack, and some more. */
const SWEEP_SLACK_MS = 2_500;

export interface HistoryOp {
  proc: string;
  seq: number;
  op: Op;
  start: number;
  end: number;
  acknowledged: boolean;
  ok: boolean;
  code?: string;
  content?: string;
}

/** Errors after which the command changed nothing (the spec's refusals). */
const NOTHING_CHANGED = new Set([
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'INVALID_PATH',
  'NOT_A_DIRECTORY',
  'NOT_A_FILE',
  'INVALID_INPUT',
  'INVALID_RANGE',
  'QUOTA_EXCEEDED',
]);

export function effective(o: HistoryOp): boolean {
  return o.ok || !o.acknowledged || !NOTHING_CHANGED.has(o.code ?? '');
}

export function mergeLogs(records: LogRecord[], killedAt: Map<string, number>, endOfRun: number): HistoryOp[] {
  const ops = new Map<string, HistoryOp>();
  for (const r of records) {
    const id = `${r.proc}#${r.seq}`;
    if (r.type === 'start') {
      ops.set(id, {
        proc: r.proc,
        seq: r.seq,
        op: r.op,
        start: r.at,
        end: (killedAt.get(r.proc) ?? endOfRun) + KILL_SLACK_MS,
        acknowledged: false,
        ok: false,
      });
    } else {
      const o = ops.get(id);
      if (!o) continue;
      o.end = r.at;
      o.acknowledged = true;
      o.ok = r.ok;
      if (r.code !== undefined) o.code = r.code;
      if (r.content !== undefined) o.content = r.content;
    }
  }
  return [...ops.values()];
}

const dirOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));
const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const within = (path: string, target: string): boolean => path === target || path.startsWith(`${target}/`);

export interface Violation {
  rule: string;
  detail: string;
}

/** `final`: path -> the file's lines. */
export function checkHistory(ops: HistoryOp[], final: Map<string, string[]>): Violation[] {
  const violations: Violation[] = [];
  const renames = ops.filter(
    (o): o is HistoryOp & { op: Extract<Op, { kind: 'rename' }> } => o.op.kind === 'rename' && effective(o),
  );
  const sweeps = ops.filter((o) => o.op.kind === 'sweep' && effective(o));
  const restores = ops.filter(
    (o): o is HistoryOp & { op: Extract<Op, { kind: 'restore' }> } => o.op.kind === 'restore' && effective(o),
  );
  /** Whether a restore may have undone an operation over [start, end]: it went back before its end and did not end before its start. */
  const undone = (start: number, end: number): boolean =>
    restores.some((r) => r.end >= start && (r.op.asOf ?? r.start) <= end);
  const tokensAt = new Map<string, string>(); // token -> final path
  const idsAt = new Map<string, string[]>();
  for (const [path, lines] of final) {
    const id = lines[0] ?? '';
    idsAt.set(id, [...(idsAt.get(id) ?? []), path]);
    for (const line of lines) if (line.startsWith('t:')) tokensAt.set(line, path);
  }

  /** Directories a file in `dir` may have reached through renames that did not end before `since`. */
  const reachable = (dir: string, since: number): Set<string> => {
    const dirs = new Set([dir]);
    for (let grew = true; grew;) {
      grew = false;
      for (const r of renames) {
        if (r.end >= since && dirs.has(r.op.from) && !dirs.has(r.op.to)) {
          dirs.add(r.op.to);
          grew = true;
        }
      }
    }
    return dirs;
  };
  /** Whether an effective op that deletes or replaces `name` in one of `dirs` did not end before `since`. */
  const removedSince = (dirs: Set<string>, name: string, since: number): boolean =>
    ops.some((o) => {
      if (!effective(o) || o.end < since) return false;
      if (o.op.kind === 'delete')
        return [...dirs].some((d) => o.op.kind === 'delete' && (o.op.path === d || o.op.path === `${d}/${name}`));
      if (o.op.kind === 'create') return dirs.has(dirOf(o.op.path)) && nameOf(o.op.path) === name;
      return false;
    }) || sweeps.some((s) => s.end >= since + SWEEP_IDLE_MS - SWEEP_SLACK_MS);

  // Rule 1: acknowledged inserts.
  for (const o of ops) {
    if (o.op.kind !== 'insert' || !o.ok) continue;
    if (tokensAt.has(o.op.token)) continue;
    if (removedSince(reachable(dirOf(o.op.path), o.start), nameOf(o.op.path), o.start) || undone(o.start, o.end))
      continue;
    violations.push({
      rule: 'acknowledged insert lost',
      detail: `${o.op.token} into ${o.op.path} [${o.start}, ${o.end}]`,
    });
  }

  // Rule 2: nothing comes back after an acknowledged delete.
  const createOf = new Map<string, HistoryOp>();
  for (const o of ops) if (o.op.kind === 'create') createOf.set(o.op.id, o);
  for (const d of ops) {
    if (d.op.kind !== 'delete' || !d.ok) continue;
    const target = d.op.path;
    for (const [path, lines] of final) {
      if (!within(path, target)) continue;
      const created = createOf.get(lines[0] ?? '');
      if (created && effective(created) && created.end >= d.start) continue;
      const movedIn = renames.some((r) => r.end >= d.start && r.op.to === dirOf(path));
      if (movedIn || undone(d.start, d.end)) continue;
      violations.push({
        rule: 'came back after a delete',
        detail: `${path} (${lines[0]}) after delete of ${target} [${d.start}, ${d.end}]`,
      });
    }
  }

  // Rule 3: one place per file, unless joined by renames that did not succeed.
  const partial = renames.filter((r) => !r.ok || undone(r.start, r.end));
  const joined = (a: string, b: string): boolean => {
    const seen = new Set([a]);
    const queue = [a];
    while (queue.length > 0) {
      const d = queue.pop()!;
      if (d === b) return true;
      for (const r of partial) {
        for (const [x, y] of [
          [r.op.from, r.op.to],
          [r.op.to, r.op.from],
        ] as const) {
          if (x === d && !seen.has(y)) {
            seen.add(y);
            queue.push(y);
          }
        }
      }
    }
    return false;
  };
  for (const [id, paths] of idsAt) {
    if (paths.length < 2) continue;
    for (let i = 1; i < paths.length; i++) {
      if (nameOf(paths[i]!) === nameOf(paths[0]!) && joined(dirOf(paths[0]!), dirOf(paths[i]!))) continue;
      violations.push({ rule: 'file at two places', detail: `${id} at ${paths.join(' and ')}` });
    }
  }

  // Rule 4: reads.
  const inserts = ops.filter((o) => o.op.kind === 'insert');
  for (const v of ops) {
    if (v.op.kind !== 'view' || !v.ok || v.content === undefined) continue;
    const path = v.op.path;
    const seen = new Set(v.content.split('\n').map((l) => l.replace(/^\s*\d+\t/, '')));
    for (const i of inserts) {
      if (i.op.kind !== 'insert') continue;
      if (seen.has(i.op.token) && i.start > v.end)
        violations.push({
          rule: 'read from the future',
          detail: `${i.op.token} in a read of ${path} that ended before it began`,
        });
      if (!i.ok || i.op.path !== path || i.end >= v.start || seen.has(i.op.token)) continue;
      const disturbed = ops.some((o) => {
        if (!effective(o) || o.end < i.start || o.start > v.end) return false;
        if (o.op.kind === 'sweep' || o.op.kind === 'restore') return true;
        if (o.op.kind === 'rename') return o.op.from === dirOf(path) || o.op.to === dirOf(path);
        if (o.op.kind === 'delete') return within(path, o.op.path);
        if (o.op.kind === 'create') return o.op.path === path;
        return false;
      });
      if (!disturbed)
        violations.push({
          rule: 'read missed an acknowledged insert',
          detail: `${i.op.token} in ${path}, acknowledged at ${i.end}, read [${v.start}, ${v.end}]`,
        });
    }
  }
  return violations;
}

/**
 * Rule 5: every acknowledged insert is kept by the history. `kept`: every token line of every kept
 * version (and of the final state), wherever it is now.
 */
export function checkKept(ops: HistoryOp[], kept: Set<string>): Violation[] {
  const sweeps = ops.filter((o) => o.op.kind === 'sweep' && effective(o));
  const violations: Violation[] = [];
  for (const o of ops) {
    if (o.op.kind !== 'insert' || !o.ok || kept.has(o.op.token)) continue;
    if (sweeps.some((s) => s.end >= o.start + SWEEP_IDLE_MS - SWEEP_SLACK_MS)) continue;
    violations.push({
      rule: 'acknowledged insert not in the history',
      detail: `${o.op.token} into ${o.op.path} [${o.start}, ${o.end}]`,
    });
  }
  return violations;
}
