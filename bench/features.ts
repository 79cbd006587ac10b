/**
 * What each default feature costs an edit's CPU on the SQLite store, measured in one run:
 *   npx tsx bench/features.ts [users=16] [rounds=16]
 * One vault per variant (each its own SQLite file, durability=full): the defaults with the audit log
 * (a file sink, MACed records), then the same with one feature off (the audit log, the PII redactor,
 * the quota, file history, encryption), with all five off, and with all five off on the memory store
 * (what the storage engine itself costs is the difference to the row above it). `users` users each
 * edit their own four 4 KiB files at once (bench/goals.ts's 16 users' row). The variants run round
 * by round in one process, the order reversed every other round, so that this machine's drift (a
 * third from one hour to the next) falls on every variant alike; the first two rounds warm up; each
 * row is the median round's CPU (process.cpuUsage, user + system) per edit.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createVault, type Vault } from '../src/index.js';
import { editInput, formatNumber, median, mustRun, printTable, seedFiles } from './stats.js';

const users = Number(process.argv[2] ?? 16);
const rounds = Number(process.argv[3] ?? 16);
const WARM_ROUNDS = 2;
const FILES_EACH = 4;
/** Edits per user and round: a whole number of passes over its files, both words (each round ends where it began). */
const EACH = Math.max(FILES_EACH * 2, Math.round(2048 / users / (FILES_EACH * 2)) * FILES_EACH * 2);

type Options = Record<string, unknown>;
const VARIANTS: Array<[string, Options, boolean?]> = [
  ['defaults (SQLite, audit log on)', {}],
  ['without the audit log', { audit: undefined }],
  ['without the PII redactor', { pii: false }],
  ['without the quota', { quota: false }],
  ['without file history', { history: false }],
  ['without encryption', { encryption: false }],
  ['without all five', { audit: undefined, pii: false, quota: false, history: false, encryption: false }],
  [
    'without all five, memory store',
    { audit: undefined, pii: false, quota: false, history: false, encryption: false },
    true,
  ],
];

interface Variant {
  label: string;
  vault: Vault;
  cpu: number[];
}

async function open(root: string, index: number, label: string, off: Options, memory = false): Promise<Variant> {
  const options: Options = {
    store: memory ? 'memory:' : `sqlite:${join(root, `v${index}.db`)}`,
    history: true,
    encryption: { masterKey: randomBytes(32).toString('base64') },
    audit: { file: join(root, `v${index}.audit.jsonl`) },
  };
  for (const [key, value] of Object.entries(off)) {
    if (value === undefined) delete options[key];
    else options[key] = value;
  }
  const vault = await createVault(options as Parameters<typeof createVault>[0]);
  for (let u = 0; u < users; u++) await seedFiles(vault, `u${u}`, FILES_EACH);
  return { label, vault, cpu: [] };
}

/** One round: every user's EACH edits at once; CPU µs per edit. */
async function round(variant: Variant): Promise<number> {
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: users }, async (_, u) => {
      for (let i = 0; i < EACH; i++) await mustRun(variant.vault, `u${u}`, editInput(i, FILES_EACH));
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / (EACH * users);
}

const root = await mkdtemp(join(tmpdir(), 'memvault-bench-features-'));
const variants: Variant[] = [];
try {
  for (const [i, [label, off, memory]] of VARIANTS.entries()) variants.push(await open(root, i, label, off, memory));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const cpu = await round(variant);
      if (r >= WARM_ROUNDS) variant.cpu.push(cpu);
    }
  }
  const base = median(variants[0]!.cpu);
  console.log(
    `\nCPU per 4 KiB edit by feature (${users} users at once, ${EACH * users} edits a round, median of ${rounds - WARM_ROUNDS} rounds; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; node ${process.version})\n`,
  );
  printTable(
    ['variant', 'CPU µs/edit', 'against the defaults', 'rounds (fastest to slowest)'],
    variants.map((v) => {
      const cpu = median(v.cpu);
      const sorted = [...v.cpu].sort((a, b) => a - b);
      return [
        v.label,
        formatNumber(cpu),
        v === variants[0] ? '' : formatNumber(cpu - base),
        `${formatNumber(sorted[0]!)} to ${formatNumber(sorted[sorted.length - 1]!)}`,
      ];
    }),
  );
} finally {
  for (const variant of variants) await variant.vault.close();
  await rm(root, { recursive: true, force: true });
}
