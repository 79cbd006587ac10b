/**
 * Every metric of docs/observability.md moves as documented over a scripted session with the SDK's
 * in-memory exporters: commands and outcomes, durations, store requests by status (the same counts
 * the command's own accounting sees), conflicts and retries under real concurrent edits of two
 * instances, a quota refusal, PII redaction and rejection, audit records, key cache, the sweeper.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { sweep } from '../../src/expiry/sweep.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore, PutOptions } from '../../src/store/port.js';
import { METRICS } from '../../src/telemetry/names.js';
import { ManualClock } from '../expiry/helpers.js';
import { FaultyStore } from '../kit/stores.js';
import { registerInMemoryTelemetry, total, type InMemoryTelemetry, type Point } from './harness.js';

const USER = 'planted-user-91c2@example.com';
const FILE = '/memories/plantedpath/notes.md';
const masterKey = randomBytes(32).toString('base64');

let telemetry: InMemoryTelemetry;
let dir: string;

beforeAll(async () => {
  telemetry = registerInMemoryTelemetry();
  dir = await mkdtemp(join(tmpdir(), 'memvault-otel-'));
});
afterAll(async () => {
  await telemetry.shutdown();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await telemetry.collect();
});

async function encryptedVault(store: ObjectStore, extra: Parameters<typeof createVault>[0] = {}): Promise<Vault> {
  return createVault({ store, encryption: { masterKey }, ...extra });
}

/** Runs one command and returns its result with the requests its own accounting counted. */
async function counted(vault: Vault, input: Record<string, unknown>, user = USER) {
  const requests: RequestCounter = {};
  const result = await withRequestCounter(requests, () => vault.run(user, input));
  return { result, requests };
}

function requestsByType(points: Point[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of points.filter((p) => p.name === METRICS.storeRequests)) {
    const type = String(p.attributes['memvault.store.request']);
    out[type] = (out[type] ?? 0) + p.value;
  }
  return out;
}

describe('command metrics', () => {
  it('counts each command by command and outcome, with its error code, and times it', async () => {
    const vault = await encryptedVault(new MemoryStore(), {
      quota: { maxFileBytes: 4096 },
      pii: { policy: { US_SSN: 'reject' } },
    });
    const runs: Array<[Record<string, unknown>, boolean]> = [
      [{ command: 'create', path: FILE, file_text: 'plantedcontent one\n' }, false],
      [{ command: 'view', path: FILE }, false],
      [{ command: 'view', path: '/memories/missing-planted.md' }, true],
      [{ command: 'str_replace', path: FILE, old_str: 'one', new_str: 'two' }, false],
      [{ command: 'insert', path: FILE, insert_line: 0, insert_text: 'first' }, false],
      [{ command: 'bogus', path: FILE }, true],
      [{ command: 'view', path: '/etc/plantedpath' }, true],
      [{ command: 'rename', old_path: FILE, new_path: '/memories/plantedpath/moved.md' }, false],
      [{ command: 'delete', path: '/memories/plantedpath/moved.md' }, false],
    ];
    for (const [input, isError] of runs) expect((await vault.run(USER, input)).isError).toBe(isError);
    const points = await telemetry.collect();
    const commands = (match: Record<string, string>) => total(points, METRICS.commands, match);
    expect(commands({})).toBe(runs.length);
    expect(commands({ 'memvault.command': 'create', 'memvault.outcome': 'ok' })).toBe(1);
    expect(commands({ 'memvault.command': 'view', 'memvault.outcome': 'ok' })).toBe(1);
    expect(
      commands({ 'memvault.command': 'view', 'memvault.outcome': 'error', 'memvault.error.code': 'NOT_FOUND' }),
    ).toBe(1);
    expect(commands({ 'memvault.command': 'view', 'memvault.error.code': 'INVALID_PATH' })).toBe(1);
    expect(commands({ 'memvault.command': 'unknown', 'memvault.error.code': 'INVALID_INPUT' })).toBe(1);
    for (const name of ['str_replace', 'insert', 'rename', 'delete'])
      expect(commands({ 'memvault.command': name, 'memvault.outcome': 'ok' })).toBe(1);
    // An ok command carries no error code at all.
    expect(
      points.filter(
        (p) =>
          p.name === METRICS.commands &&
          p.attributes['memvault.outcome'] === 'ok' &&
          'memvault.error.code' in p.attributes,
      ),
    ).toEqual([]);
    // The duration histogram has one recording per command, in seconds, with the same attributes.
    expect(total(points, METRICS.commandDuration)).toBe(runs.length);
    const durations = points.filter((p) => p.name === METRICS.commandDuration);
    expect(durations.every((p) => p.unit === 's' && (p.sum ?? -1) >= 0 && (p.sum ?? 99) < 30)).toBe(true);
    expect(
      total(points, METRICS.commandDuration, { 'memvault.command': 'view', 'memvault.error.code': 'NOT_FOUND' }),
    ).toBe(1);
    await vault.close();
  });

  it('counts a user-key load that fails before the chain as a failed command', async () => {
    const store = new MemoryStore();
    const vault = await encryptedVault(store);
    // The key record is damaged: the command cannot load the user's key.
    await vault.run(USER, { command: 'view', path: '/memories' });
    const keys = (await store.list('k/')).objects.map((o) => o.key).filter((k) => k !== 'k/_deployment');
    const fresh = await encryptedVault(store);
    for (const key of keys) await store.put(key, new TextEncoder().encode('{"damaged":true}'));
    await telemetry.collect();
    const result = await fresh.run(USER, { command: 'view', path: '/memories' });
    expect(result.isError).toBe(true);
    const points = await telemetry.collect();
    expect(
      total(points, METRICS.commands, {
        'memvault.command': 'view',
        'memvault.outcome': 'error',
        'memvault.error.code': result.code ?? 'UNSPECIFIED',
      }),
    ).toBe(1);
    await vault.close();
    await fresh.close();
  });
});

describe('store request metrics', () => {
  it('reports exactly the requests each command counted, by type, with status ok for a clean run', async () => {
    const vault = await encryptedVault(new MemoryStore());
    for (const input of [
      { command: 'create', path: FILE, file_text: 'x\n' },
      { command: 'view', path: '/memories' },
      { command: 'str_replace', path: FILE, old_str: 'x', new_str: 'y' },
      { command: 'rename', old_path: '/memories/plantedpath', new_path: '/memories/moved' },
      { command: 'delete', path: '/memories/moved' },
    ]) {
      await telemetry.collect();
      const { result, requests } = await counted(vault, input);
      expect(result.isError).toBe(false);
      const points = await telemetry.collect();
      expect(requestsByType(points)).toEqual(requests);
      expect(
        points
          .filter((p) => p.name === METRICS.storeRequests)
          .every(
            (p) =>
              p.attributes['memvault.store.status'] === 'ok' || p.attributes['memvault.store.status'] === 'not_found',
          ),
      ).toBe(true);
      expect(total(points, METRICS.storeDuration)).toBeGreaterThan(0);
    }
    await vault.close();
  });

  it('reports a GET of a missing file as not_found and a lost conditional PUT as precondition_failed', async () => {
    const vault = await encryptedVault(new MemoryStore());
    await vault.run(USER, { command: 'create', path: FILE, file_text: 'x\n' });
    await telemetry.collect();
    await vault.run(USER, { command: 'view', path: '/memories/plantedpath/absent.md' });
    let points = await telemetry.collect();
    expect(
      total(points, METRICS.storeDuration, {
        'memvault.store.operation': 'get',
        'memvault.store.status': 'not_found',
      }) +
        total(points, METRICS.storeDuration, {
          'memvault.store.operation': 'head',
          'memvault.store.status': 'not_found',
        }),
    ).toBeGreaterThan(0);
    // create_mode 'fail': the If-None-Match PUT on an existing file loses.
    const strict = await encryptedVault(new MemoryStore(), { createMode: 'fail' });
    await strict.run(USER, { command: 'create', path: FILE, file_text: 'x\n' });
    await telemetry.collect();
    expect((await strict.run(USER, { command: 'create', path: FILE, file_text: 'y\n' })).code).toBe('ALREADY_EXISTS');
    points = await telemetry.collect();
    expect(
      total(points, METRICS.storeRequests, {
        'memvault.store.request': 'PUT',
        'memvault.store.status': 'precondition_failed',
      }),
    ).toBe(1);
    expect(total(points, METRICS.writeConflicts, { 'memvault.store.operation': 'put' })).toBe(1);
    await vault.close();
    await strict.close();
  });
});

/** A store where another writer rewrites an object just before the next `n` conditional PUTs to it. */
class RacingStore extends MemoryStore {
  races = 0;
  override async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
    if (options.ifMatch !== undefined && this.races > 0) {
      this.races--;
      const current = await super.get(key);
      if (current) await super.put(key, current.body, { metadata: current.metadata });
    }
    return super.put(key, body, options);
  }
}

describe('conflicts and retries', () => {
  it('counts each lost conditional write and each retry of the edit, and the edit still lands', async () => {
    const store = new RacingStore();
    const vault = await encryptedVault(store);
    await vault.run(USER, { command: 'create', path: FILE, file_text: 'a\nb\n' });
    await telemetry.collect();
    store.races = 3;
    expect((await vault.run(USER, { command: 'str_replace', path: FILE, old_str: 'b', new_str: 'B' })).isError).toBe(
      false,
    );
    const points = await telemetry.collect();
    expect(total(points, METRICS.writeConflicts, { 'memvault.store.operation': 'put' })).toBe(3);
    expect(total(points, METRICS.writeRetries, { 'memvault.retry.loop': 'edit' })).toBe(3);
    // Three PUT operations failed (their requests include the simulated rival's own PUT, made inside them).
    expect(
      total(points, METRICS.storeDuration, {
        'memvault.store.operation': 'put',
        'memvault.store.status': 'precondition_failed',
      }),
    ).toBe(3);
    // The edit's PUT and its kept version's (history is on by default).
    expect(
      total(points, METRICS.storeDuration, { 'memvault.store.operation': 'put', 'memvault.store.status': 'ok' }),
    ).toBe(2);
    expect(total(points, METRICS.commands, { 'memvault.command': 'str_replace', 'memvault.outcome': 'ok' })).toBe(1);
    await vault.close();
  });

  it('under concurrent inserts from two instances sharing a store: conflicts = retries, no edit lost', async () => {
    // Each request waits a random few milliseconds (as a network answer would), so that the two
    // instances' reads and conditional writes interleave; an in-memory store answering at once
    // let one instance's whole edit run between the other's steps, and no conflict happened.
    const store = new FaultyStore(new MemoryStore(), 4);
    const [a, b] = [await encryptedVault(store), await encryptedVault(store)];
    await a.run(USER, { command: 'create', path: FILE, file_text: 'head\n' });
    await telemetry.collect();
    const inserts = Array.from({ length: 24 }, (_, i) =>
      (i % 2 ? a : b).run(USER, { command: 'insert', path: FILE, insert_line: 1, insert_text: `line ${i}` }),
    );
    expect((await Promise.all(inserts)).every((r) => !r.isError)).toBe(true);
    const points = await telemetry.collect();
    const conflicts = total(points, METRICS.writeConflicts);
    expect(conflicts).toBeGreaterThan(0);
    expect(total(points, METRICS.writeRetries, { 'memvault.retry.loop': 'edit' })).toBe(conflicts);
    expect(total(points, METRICS.commands, { 'memvault.command': 'insert', 'memvault.outcome': 'ok' })).toBe(24);
    const view = await a.run(USER, { command: 'view', path: FILE });
    const lines = String(view.content)
      .split('\n')
      .slice(1)
      .map((l) => l.split('\t')[1]);
    expect(lines.sort()).toEqual(['head', ...Array.from({ length: 24 }, (_, i) => `line ${i}`)].sort());
    await a.close();
    await b.close();
  });

  it.each([
    ['a marker PUT (S3)', 'put'],
    ['the conditional delete (memory and file stores)', 'delete'],
  ] as const)(
    'counts the retries of a rename whose source is edited meanwhile (fenced by %s)',
    async (_kind, operation) => {
      const store = new MemoryStore();
      // A store like S3 does not offer deleteExactly: the fence is then a conditional PUT of a marker.
      if (operation === 'put') Object.assign(store, { deleteExactly: undefined });
      const vault = await encryptedVault(store);
      await vault.run(USER, { command: 'create', path: FILE, file_text: 'a\n' });
      // Another writer edits the source between the copy and the fence (the conditional write that
      // takes the source out of use, docs/s3.md): the fence loses, the rename copies the newer
      // version and fences again.
      let raced = false;
      const editMeanwhile = async (key: string) => {
        if (raced) return;
        raced = true;
        const current = await store.get(key);
        if (current) await MemoryStore.prototype.put.call(store, key, current.body, { metadata: current.metadata });
      };
      const original = store.put.bind(store);
      store.put = async (key, body, options) => {
        if (options?.ifMatch !== undefined && options.metadata?.['memvault-fence'] !== undefined)
          await editMeanwhile(key);
        return original(key, body, options);
      };
      if (operation === 'delete') {
        const deleteExactly = MemoryStore.prototype.deleteExactly.bind(store);
        store.deleteExactly = async (key, ifMatch) => {
          await editMeanwhile(key);
          return deleteExactly(key, ifMatch);
        };
      }
      await telemetry.collect();
      expect(
        (await vault.run(USER, { command: 'rename', old_path: FILE, new_path: '/memories/plantedpath/moved.md' }))
          .isError,
      ).toBe(false);
      expect(raced).toBe(true);
      const points = await telemetry.collect();
      expect(total(points, METRICS.writeConflicts, { 'memvault.store.operation': operation })).toBe(1);
      expect(total(points, METRICS.writeRetries, { 'memvault.retry.loop': 'rename' })).toBe(1);
      await vault.close();
    },
  );
});

describe('conflicts and retries: a create over an expired file', () => {
  it('counts the retry when the expired file is swept between the look and the replace', async () => {
    const clock = new ManualClock();
    class SweptMeanwhile extends MemoryStore {
      sweepNext = false;
      override async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ etag: string }> {
        if (this.sweepNext && options.ifMatch !== undefined) {
          this.sweepNext = false;
          await super.delete(key);
        }
        return super.put(key, body, options);
      }
    }
    const store = new SweptMeanwhile(clock.now);
    const vault = await createVault({
      store,
      encryption: false,
      createMode: 'fail',
      expiry: { ttlDays: 30, now: clock.now },
    });
    await vault.run(USER, { command: 'create', path: FILE, file_text: 'old' });
    clock.advanceDays(40);
    await telemetry.collect();
    store.sweepNext = true;
    expect((await vault.run(USER, { command: 'create', path: FILE, file_text: 'new' })).isError).toBe(false);
    const points = await telemetry.collect();
    expect(total(points, METRICS.writeRetries, { 'memvault.retry.loop': 'expired_replace' })).toBe(1);
    // The create-only PUT met the expired file, the If-Match PUT found it swept: two lost conditional writes.
    expect(total(points, METRICS.writeConflicts, { 'memvault.store.operation': 'put' })).toBe(2);
    expect(total(points, METRICS.writeRetries)).toBe(1);
    await vault.close();
  });
});

describe('quota and PII decisions', () => {
  it('counts a quota refusal by limit, and nothing for writes within the limits', async () => {
    const vault = await encryptedVault(new MemoryStore(), { quota: { maxFileBytes: 1000, maxUserFiles: 2 } });
    await vault.run(USER, { command: 'create', path: '/memories/a.md', file_text: 'small' });
    expect(total(await telemetry.collect(), METRICS.quotaRefusals)).toBe(0);
    // Over the per-file limit: refused by the input-size check before the quota runs (same limit).
    expect(
      (await vault.run(USER, { command: 'create', path: '/memories/b.md', file_text: 'x'.repeat(1001) })).code,
    ).toBe('TOO_LARGE');
    await vault.run(USER, { command: 'create', path: '/memories/b.md', file_text: 'ok' });
    expect((await vault.run(USER, { command: 'create', path: '/memories/c.md', file_text: 'third' })).code).toBe(
      'QUOTA_EXCEEDED',
    );
    const points = await telemetry.collect();
    expect(total(points, METRICS.quotaRefusals, { 'memvault.quota.limit': 'file_bytes' })).toBe(1);
    expect(total(points, METRICS.quotaRefusals, { 'memvault.quota.limit': 'user_files' })).toBe(1);
    expect(total(points, METRICS.quotaRefusals)).toBe(2);
    expect(total(points, METRICS.commands, { 'memvault.error.code': 'QUOTA_EXCEEDED' })).toBe(1);
    expect(total(points, METRICS.commands, { 'memvault.error.code': 'TOO_LARGE' })).toBe(1);
    await vault.close();
  });

  it('counts PII findings by type and policy action: redacted and rejected', async () => {
    const vault = await encryptedVault(new MemoryStore(), { pii: { policy: { US_SSN: 'reject' } } });
    await vault.run(USER, {
      command: 'create',
      path: FILE,
      file_text: 'mail planted.person@example.org or other.planted@example.net\n',
    });
    expect(
      (await vault.run(USER, { command: 'create', path: FILE, file_text: 'ssn 123-45-6789 and a@example.org' })).code,
    ).toBe('PII_REJECTED');
    await vault.run(USER, { command: 'view', path: FILE });
    const points = await telemetry.collect();
    expect(total(points, METRICS.piiFindings, { 'memvault.pii.type': 'EMAIL', 'memvault.pii.action': 'redact' })).toBe(
      3,
    );
    expect(total(points, METRICS.piiFindings, { 'memvault.pii.type': 'US_SSN', 'memvault.pii.action': 'reject' })).toBe(
      1,
    );
    expect(total(points, METRICS.piiFindings)).toBe(4);
    await vault.close();
  });
});

describe('audit, key cache, sweeper', () => {
  it('counts audit records by type and times each write', async () => {
    const vault = await encryptedVault(new MemoryStore(), { audit: { file: join(dir, 'audit.jsonl') } });
    const opened = await telemetry.collect();
    expect(
      total(opened, METRICS.auditRecords, { 'memvault.audit.record_type': 'start', 'memvault.audit.status': 'ok' }),
    ).toBe(1);
    await vault.run(USER, { command: 'create', path: FILE, file_text: 'x' });
    await vault.run(USER, { command: 'bogus' });
    await vault.run(USER, { command: 'view', path: FILE });
    const points = await telemetry.collect();
    expect(
      total(points, METRICS.auditRecords, { 'memvault.audit.record_type': 'command', 'memvault.audit.status': 'ok' }),
    ).toBe(3);
    expect(total(points, METRICS.auditWriteDuration, { 'memvault.audit.record_type': 'command' })).toBe(3);
    await vault.close();
  });

  it('counts key cache misses for each new user and hits after', async () => {
    const vault = await encryptedVault(new MemoryStore());
    await vault.run('planted-a', { command: 'view', path: '/memories' });
    await vault.run('planted-b', { command: 'view', path: '/memories' });
    for (let i = 0; i < 3; i++) await vault.run('planted-a', { command: 'view', path: '/memories' });
    const points = await telemetry.collect();
    expect(total(points, METRICS.keyCacheLookups, { 'memvault.key_cache.result': 'miss' })).toBe(2);
    expect(total(points, METRICS.keyCacheLookups, { 'memvault.key_cache.result': 'hit' })).toBe(3);
    await vault.close();
  });

  it('counts sweeper runs, files scanned and deleted (none in a dry run), and its requests', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const vault = await createVault({ store, encryption: false, expiry: { ttlDays: 30, now: clock.now } });
    for (const name of ['a', 'b', 'c'])
      await vault.run(USER, { command: 'create', path: `/memories/${name}.md`, file_text: name });
    clock.advanceDays(10);
    await vault.run(USER, { command: 'create', path: '/memories/fresh.md', file_text: 'new' });
    clock.advanceDays(25);
    await telemetry.collect();
    const dry = await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now, dryRun: true });
    expect(dry.expired).toBe(3);
    let points = await telemetry.collect();
    expect(total(points, METRICS.sweeperRuns, { 'memvault.sweeper.mode': 'dry_run', 'memvault.outcome': 'ok' })).toBe(
      1,
    );
    expect(total(points, METRICS.sweeperScanned)).toBe(4);
    expect(total(points, METRICS.sweeperDeleted)).toBe(0);
    const summary = await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now });
    expect(summary.expired).toBe(3);
    points = await telemetry.collect();
    expect(total(points, METRICS.sweeperRuns, { 'memvault.sweeper.mode': 'delete', 'memvault.outcome': 'ok' })).toBe(1);
    expect(total(points, METRICS.sweeperScanned, { 'memvault.sweeper.mode': 'delete' })).toBe(4);
    expect(total(points, METRICS.sweeperDeleted, { 'memvault.sweeper.mode': 'delete' })).toBe(3);
    expect(
      total(points, METRICS.storeRequests, { 'memvault.store.request': 'LIST', 'memvault.store.status': 'ok' }),
    ).toBeGreaterThan(0);
    expect(
      total(points, METRICS.storeRequests, { 'memvault.store.request': 'DELETE', 'memvault.store.status': 'ok' }),
    ).toBe(3);
    // A run that cannot list fails, and says so.
    const broken = new MemoryStore();
    broken.list = () => Promise.reject(new Error('unreachable'));
    await expect(sweep({ store: broken, ttl: { ttlDays: 30 } })).rejects.toThrow();
    points = await telemetry.collect();
    expect(total(points, METRICS.sweeperRuns, { 'memvault.outcome': 'error', 'memvault.error.code': 'INTERNAL' })).toBe(
      1,
    );
    await vault.close();
  });
});
