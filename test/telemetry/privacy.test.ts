/**
 * No metric or span attribute carries a user id, a pseudonymous uid, a path, a store key or content:
 * a session with every feature on plants distinctive values everywhere and every exported name,
 * attribute, status and event is scanned for them. Every attribute is also checked against its
 * documented value set (bounded cardinality).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweep } from '../../src/expiry/sweep.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { ATTRS } from '../../src/telemetry/names.js';
import { COMMAND_NAMES } from '../../src/tool/types.js';
import { PII_TYPES } from '../../src/pii/types.js';
import { ManualClock } from '../expiry/helpers.js';
import { registerInMemoryTelemetry, type InMemoryTelemetry, type Point } from './harness.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

const USERS = ['PLANTUSER-alpha@example.com', 'PLANTUSER-beta'];
const PLANTED = [
  'PLANTUSER',
  'PLANTDIR',
  'PLANTFILE',
  'PLANTMOVED',
  'PLANTTEXT',
  'PLANTEDIT',
  'PLANTINSERT',
  'plant.person',
  '123-45-6789',
  'example.org',
];

const ALLOWED: Record<string, (v: unknown) => boolean> = {
  [ATTRS.command]: (v) => [...COMMAND_NAMES, 'unknown'].includes(v as never),
  [ATTRS.outcome]: (v) => v === 'ok' || v === 'error',
  [ATTRS.errorCode]: (v) => typeof v === 'string' && /^[A-Z][A-Z_]*$/.test(v),
  [ATTRS.stage]: (v) =>
    ['audit', 'validate', 'path_guard', 'pii', 'pause', 'quota', 'middleware', 'execute'].includes(v as string),
  [ATTRS.stagePosition]: (v) => Number.isInteger(v),
  [ATTRS.storeKind]: (v) => ['memory', 'file', 's3'].includes(v as string),
  [ATTRS.storeOperation]: (v) => ['get', 'head', 'put', 'list', 'copy', 'delete', 'delete_many'].includes(v as string),
  [ATTRS.storeRequest]: (v) => typeof v === 'string' && /^[A-Z][A-Z_]*$/.test(v),
  [ATTRS.storeStatus]: (v) =>
    ['ok', 'not_found', 'precondition_failed', 'unavailable', 'error', 'unknown'].includes(v as string),
  [ATTRS.retryLoop]: (v) => ['edit', 'rename', 'expired_replace', 'overwrite'].includes(v as string),
  [ATTRS.quotaLimit]: (v) => ['file_bytes', 'user_bytes', 'user_files', 'view_chars'].includes(v as string),
  [ATTRS.piiType]: (v) => PII_TYPES.includes(v as never),
  [ATTRS.piiAction]: (v) => v === 'redact' || v === 'reject',
  [ATTRS.auditRecordType]: (v) => typeof v === 'string' && /^[a-z_]+$/.test(v),
  [ATTRS.auditStatus]: (v) => v === 'ok' || v === 'error',
  [ATTRS.sweepMode]: (v) => v === 'dry_run' || v === 'delete',
  [ATTRS.keyCacheResult]: (v) => v === 'hit' || v === 'miss',
  [ATTRS.listingSkipReason]: (v) => v === 'folder_marker' || v === 'not_decryptable',
};

let telemetry: InMemoryTelemetry;
let dir: string;
beforeAll(async () => {
  telemetry = registerInMemoryTelemetry();
  dir = await mkdtemp(join(tmpdir(), 'memvault-privacy-'));
});
afterAll(async () => {
  await telemetry.shutdown();
  await rm(dir, { recursive: true, force: true });
});

async function session(vault: Vault, user: string): Promise<void> {
  const f = '/memories/PLANTDIR/PLANTFILE.md';
  await vault.run(user, { command: 'create', path: f, file_text: 'PLANTTEXT line\nmail plant.person@example.org\n' });
  await vault.run(user, { command: 'str_replace', path: f, old_str: 'PLANTTEXT', new_str: 'PLANTEDIT' });
  await vault.run(user, { command: 'insert', path: f, insert_line: 0, insert_text: 'PLANTINSERT' });
  await vault.run(user, { command: 'create', path: '/memories/PLANTDIR/ssn.md', file_text: 'ssn 123-45-6789' });
  await vault.run(user, { command: 'create', path: '/memories/PLANTDIR/big.md', file_text: 'PLANTTEXT'.repeat(400) });
  await vault.run(user, { command: 'view', path: '/memories/PLANTDIR/PLANTMISSING.md' });
  await vault.run(user, { command: 'view', path: '/PLANTDIR/outside' });
  await vault.run(user, { command: 'PLANTTEXT', path: f });
  await vault.run(user, { command: 'view', path: f, view_range: [50, 60] });
  await vault.run(user, { command: 'rename', old_path: '/memories/PLANTDIR', new_path: '/memories/PLANTMOVED' });
  await vault.run(user, { command: 'view', path: '/memories' });
  await vault.run(user, { command: 'delete', path: '/memories/PLANTMOVED/PLANTFILE.md' });
}

describe('telemetry privacy', () => {
  it('exports no planted value and only documented attribute values', async () => {
    const masterKey = randomBytes(32).toString('base64');
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const options = {
      store,
      encryption: { masterKey },
      audit: { file: join(dir, 'audit.jsonl') },
      quota: { maxFileBytes: 2048 },
      pii: { policy: { US_SSN: 'reject' as const } },
      expiry: { ttlDays: 30, now: clock.now },
    };
    const a = await createVault(options);
    const b = await createVault({ ...options, audit: { file: join(dir, 'audit-b.jsonl') } });
    for (const user of USERS) await session(a, user);
    // Concurrent edits of one file from two instances.
    await a.run(USERS[0]!, { command: 'create', path: '/memories/PLANTDIR/shared.md', file_text: 'PLANTTEXT\n' });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? a : b).run(USERS[0]!, {
          command: 'insert',
          path: '/memories/PLANTDIR/shared.md',
          insert_line: 1,
          insert_text: `PLANTINSERT ${i}`,
        }),
      ),
    );
    // A file store too (its host directory must not appear either).
    const onDisk = await createVault({
      store: pathToFileURL(join(dir, 'PLANTDIR-store')).href,
      encryption: { masterKey },
    });
    await session(onDisk, USERS[1]!);
    clock.advanceDays(40);
    await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now, dryRun: true });
    await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now });

    const uids = await Promise.all(USERS.map(async (u) => (await a.files(u)).uid));
    const keys = (await store.list('')).objects.map((o) => o.key);
    const points: Point[] = await telemetry.collect();
    const spans: ReadableSpan[] = telemetry.spans();
    await Promise.all([a.close(), b.close(), onDisk.close()]);

    expect(points.length).toBeGreaterThan(20);
    expect(spans.length).toBeGreaterThan(100);
    const exported = JSON.stringify({
      metrics: points.map((p) => [p.name, p.unit, p.attributes]),
      spans: spans.map((s) => [s.name, s.attributes, s.status, s.events, s.links, s.instrumentationScope]),
    });
    for (const value of [...PLANTED, ...USERS, ...uids, dir]) expect(exported, value).not.toContain(value);
    for (const key of keys)
      for (const part of key.split('/').filter((p) => p.length >= 8)) expect(exported, key).not.toContain(part);

    const attributeSets = [...points.map((p) => p.attributes), ...spans.map((s) => s.attributes)];
    for (const attributes of attributeSets) {
      for (const [key, value] of Object.entries(attributes)) {
        expect(ALLOWED[key], `attribute ${key}`).toBeDefined();
        expect(ALLOWED[key]!(value), `${key}=${String(value)}`).toBe(true);
      }
    }
    // Every documented metric moved in this session.
    const moved = new Set(points.map((p) => p.name));
    for (const name of [
      'memvault.commands',
      'memvault.command.duration',
      'memvault.store.requests',
      'memvault.store.duration',
      'memvault.write.conflicts',
      'memvault.write.retries',
      'memvault.quota.refusals',
      'memvault.pii.findings',
      'memvault.audit.records',
      'memvault.audit.write.duration',
      'memvault.sweeper.runs',
      'memvault.sweeper.objects.scanned',
      'memvault.sweeper.objects.deleted',
      'memvault.key_cache.lookups',
    ]) {
      expect(moved.has(name), name).toBe(true);
    }
  });
});
