import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csvCell, csvRow, CSV_COLUMNS } from '../../src/audit/csv.js';
import { createAuditLogger } from '../../src/pipeline/audit-logger.js';
import type { AuditRecord } from '../../src/audit/record.js';
import { parseDate, registerAuditCommands } from '../../src/cli/commands/audit.js';
import { tempDir } from './helpers.js';
import { ManualClock } from '../kit/clock.js';

/** A strict RFC 4180 reader, independent of the writer, to prove the output parses back. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else cell += c;
      i++;
      continue;
    }
    if (c === '"' && cell === '') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else if (c === '"' || c === '\n' || c === '\r') throw new Error(`bare ${JSON.stringify(c)} at ${i}`);
    else cell += c;
    i++;
  }
  if (cell !== '' || row.length > 0) throw new Error('last row not terminated by CRLF');
  return rows;
}

describe('CSV cells', () => {
  it('quotes quotes, commas and line breaks (RFC 4180)', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rlf')).toBe('"cr\rlf"');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(12.5)).toBe('12.5');
    expect(csvRow(['a', 'b,c'])).toBe('a,"b,c"\r\n');
  });

  it('neutralises formulas: = + - @ tab and CR at the start of a text cell', () => {
    for (const start of ['=', '+', '-', '@', '\t']) {
      expect(csvCell(`${start}HYPERLINK("http://evil")`).replace(/^"/, '')).toMatch(/^'/);
    }
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('=A1,B1')).toBe(`"'=A1,B1"`);
    expect(csvCell('/memories/=x')).toBe('/memories/=x');
  });

  it('round-trips hostile cells through a strict reader', () => {
    const hostile = ['=cmd|"/c calc"!A1', 'x,"y"\r\nz', '', '-', 'ünïcödé ✓', '@SUM(1)'];
    const [parsed] = parseCsv(csvRow(hostile));
    expect(parsed).toEqual(hostile.map((h) => (/^[=+\-@\t\r]/.test(h) ? `'${h}` : h)));
  });
});

describe('export', () => {
  let dir: string;
  let cleanup: () => void;
  let files: string[];
  beforeEach(async () => {
    const temp = tempDir();
    dir = temp.dir;
    cleanup = temp.cleanup;
    // Two instances whose records interleave in time; one rotates and restarts.
    const clockA = new ManualClock(Date.UTC(2026, 2, 1, 10));
    const clockB = new ManualClock(Date.UTC(2026, 2, 1, 10, 0, 0, 500));
    files = [join(dir, 'a.jsonl'), join(dir, 'b.jsonl')];
    const a = await createAuditLogger({
      file: files[0]!,
      instanceId: 'node-a',
      now: clockA.nowMs,
      maxSegmentBytes: 1500,
    });
    const b = await createAuditLogger({ file: files[1]!, instanceId: 'node-b', now: clockB.nowMs });
    for (let i = 0; i < 20; i++) {
      clockA.advanceMs(1000);
      clockB.advanceMs(1000);
      a.append({
        type: 'command',
        command: 'view',
        uid: i % 2 ? 'u_odd' : 'u_even',
        path: `/memories/a,${i}.md`,
        outcome: 'ok',
      });
      b.append({
        type: 'command',
        command: 'create',
        uid: 'u_even',
        path: `=HYPERLINK("b${i}")`,
        outcome: 'error',
        code: 'QUOTA_EXCEEDED',
      });
    }
    await a.close();
    clockA.advanceMs(86_400_000);
    const a2 = await createAuditLogger({ file: files[0]!, now: clockA.nowMs });
    a2.append({ type: 'expire', counts: { objects: 2 } });
    await a2.close();
    await b.close();
  });
  afterEach(() => cleanup());

  async function runExport(args: string[], deps: Parameters<typeof registerAuditCommands>[1] = {}) {
    const out: string[] = [];
    const program = new Command().exitOverride();
    registerAuditCommands(program, { stdout: (t) => out.push(t), stderr: () => {}, progress: false, ...deps });
    await program.parseAsync(['audit', 'export', ...args], { from: 'user' });
    return out.join('');
  }

  it('merges all instances in time order as JSONL, one record per line', async () => {
    const outFile = join(dir, 'out.jsonl');
    const summary = await runExport(['--from', '2026-03-01', '--to', '2026-03-02', '--out', outFile, ...files]);
    const records = readFileSync(outFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditRecord);
    expect(records.some((r) => r.type === 'seal')).toBe(false);
    const times = records.map((r) => Date.parse(r.time));
    expect(times).toEqual([...times].sort((x, y) => x - y));
    // 2 start records + 40 commands + the restart's start + expire
    expect(records).toHaveLength(44);
    expect(records.filter((r) => r.instance === 'node-a').map((r) => r.seq)).toEqual(
      [...records.filter((r) => r.instance === 'node-a').map((r) => r.seq)].sort((x, y) => x - y),
    );
    expect(records.at(-1)).toMatchObject({ type: 'expire', time: '2026-03-02T10:00:20.000Z' });
    expect(summary).toMatch(
      /exported 44 record\(s\) from 2 instance\(s\), 2026-03-01T10:00:00.000Z to 2026-03-02T10:00:20.000Z/,
    );
  });

  it('filters by time window and user', async () => {
    const outFile = join(dir, 'out.jsonl');
    await runExport(
      [
        '--from',
        '2026-03-01T10:00:05Z',
        '--to',
        '2026-03-01T10:00:10Z',
        '--user',
        'alice@example.com',
        '--out',
        outFile,
        ...files,
      ],
      {
        uidOf: (userId) => (userId === 'alice@example.com' ? 'u_odd' : 'u_none'),
      },
    );
    const records = readFileSync(outFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditRecord);
    expect(records.map((r) => [r.instance, r.uid, r.time])).toEqual([
      // i is odd at 10:00:02, :04, ... (the first append is at 10:00:01 with i = 0); :10 is excluded.
      ['node-a', 'u_odd', '2026-03-01T10:00:06.000Z'],
      ['node-a', 'u_odd', '2026-03-01T10:00:08.000Z'],
    ]);
  });

  it('writes CSV that a strict reader parses, with header, ISO times and guarded formulas', async () => {
    const outFile = join(dir, 'out.csv');
    await runExport(['--from', '2026-03-01', '--to', '2026-03-01', '--format', 'csv', '--out', outFile, ...files]);
    const rows = parseCsv(readFileSync(outFile, 'utf8'));
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    const body = rows.slice(1);
    expect(body).toHaveLength(42);
    for (const row of body) {
      expect(row).toHaveLength(CSV_COLUMNS.length);
      expect(row[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const pathColumn = CSV_COLUMNS.indexOf('path');
    expect(body.map((r) => r[pathColumn])).toContain('/memories/a,3.md');
    expect(body.map((r) => r[pathColumn])).toContain(`'=HYPERLINK("b3")`);
    expect(body.every((r) => !/^[=+\-@]/.test(r[pathColumn]!))).toBe(true);
  });

  it('parses --to as an inclusive day and rejects bad dates', () => {
    expect(parseDate('2026-03-01', 'start').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(parseDate('2026-03-01', 'end').toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(parseDate('2026-03-01T12:00:00Z', 'end').toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(() => parseDate('yesterday', 'start')).toThrow(/not a date/);
  });
});
