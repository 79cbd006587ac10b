/**
 * Expired idempotency records go away: each new record deletes a bounded number of the user's
 * records whose last write is older than the TTL (and a minute of clock skew), never a live one,
 * never one rewritten since it was listed. On a clock, not sleeps.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSodium } from '../../src/crypto/sodium.js';
import type { UserRecords } from '../../src/memvault.js';
import { DROPPED_PER_CLAIM, dropExpiredRecords } from '../../src/serve/idempotency-expiry.js';
import { IDEMPOTENCY_RECORD_KIND, IdempotencyRecords } from '../../src/serve/idempotency.js';
import { userRecordPrefix } from '../../src/store/layout.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { Clock } from '../crypto/rekey-scenarios.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';
import { encode } from '../kit/text.js';
import { vaultOn } from './rekey-records-scenario.js';

const HOUR = 3_600_000;
const TTL = 24 * HOUR;
const SKEW = 60_000;

beforeAll(() => loadSodium());

/** A store that counts LISTs and DELETEs, may act before a request, and may say its conditional DELETE is not atomic. */
class WatchedStore extends StoreWrapper {
  readonly counts = { list: 0, delete: 0, head: 0 };
  before: ((op: StoreOp, key: string) => Promise<void>) | undefined;
  constructor(
    inner: ObjectStore,
    private readonly atomic = true,
  ) {
    super(inner);
  }
  override get atomicConditionalDelete(): boolean {
    return this.atomic;
  }
  protected override async step(op: StoreOp, key: string): Promise<void> {
    if (op === 'list' || op === 'delete' || op === 'head') this.counts[op] += 1;
    await this.before?.(op, key);
  }
}

async function setUp(atomic = true) {
  const clock = new Clock();
  const store = new WatchedStore(new MemoryStore(clock.date), atomic);
  const vault = await vaultOn(store, randomBytes(32).toString('base64'), clock);
  const records = await vault.userRecords('ida.expiry@example.com', IDEMPOTENCY_RECORD_KIND);
  const idempotency = new IdempotencyRecords(store, { now: clock.now });
  let runs = 0;
  const use = (key: string) =>
    idempotency.once(records, `idempotency-key-${key}-0123456789`, 'request', async () => ({
      content: `run ${(runs += 1)}`,
      is_error: false,
    }));
  const keysLeft = async () => {
    const keys = [];
    for await (const o of listAll(store, userRecordPrefix(records.uid, IDEMPOTENCY_RECORD_KIND))) keys.push(o.key);
    return keys;
  };
  const keyOf = (key: string) => idempotency.objectKey(records, `idempotency-key-${key}-0123456789`).objectKey;
  return { clock, store, vault, records, use, keysLeft, keyOf, runs: () => runs };
}

describe('expired idempotency records', () => {
  it('a new record removes expired ones, not a live one nor one within the skew minute; the live one still replays', async () => {
    const { clock, store, vault, use, keysLeft, keyOf, runs } = await setUp();
    await use('old');
    clock.t += TTL - HOUR;
    await use('live');
    clock.t += HOUR + SKEW / 2; // 'old' is past the TTL, not past the skew minute
    store.counts.list = 0;
    await use('new-1');
    expect(store.counts.list).toBe(1); // the whole prefix in one page
    expect(await keysLeft()).toHaveLength(3);
    clock.t += SKEW / 2;
    await use('new-2');
    expect((await keysLeft()).sort()).toEqual([keyOf('live'), keyOf('new-1'), keyOf('new-2')].sort());
    expect(await use('live')).toMatchObject({ replayed: true, result: { content: 'run 2' } });
    expect(runs()).toBe(4);
    await vault.close();
  });

  it('one new record deletes at most a few and lists at most twice, whatever the prefix holds', async () => {
    const { clock, store, vault, use, keysLeft } = await setUp();
    for (let i = 0; i < 40; i++) await use(`many-${i}`);
    clock.t += TTL + SKEW;
    store.counts.list = store.counts.delete = store.counts.head = 0;
    await use('one-more');
    expect(store.counts.list).toBe(2); // more than a page: the first, and one from a random point
    expect(store.counts.delete).toBe(DROPPED_PER_CLAIM);
    expect(store.counts.head).toBe(0); // the store decides the condition itself
    expect(await keysLeft()).toHaveLength(41 - DROPPED_PER_CLAIM);
    await vault.close();
  });

  it('a prefix of more than a page is looked at from a point, wrapping round to its start', async () => {
    const { clock, store, vault, records, use, keysLeft } = await setUp();
    for (let i = 0; i < 20; i++) await use(`wrap-${i}`);
    clock.t += TTL + SKEW;
    const before = await keysLeft();
    const prefix = userRecordPrefix(records.uid, IDEMPOTENCY_RECORD_KIND);
    const point = before[17]!.slice(prefix.length); // after it: the last two, then the first page
    store.counts.list = 0;
    expect(await dropExpiredRecords(store, prefix, TTL, clock.t, () => point)).toBe(DROPPED_PER_CLAIM);
    expect(store.counts.list).toBe(2);
    const left = new Set(await keysLeft());
    expect(before.filter((key) => !left.has(key))).toEqual([before[0], before[1], before[18], before[19]]);
    await vault.close();
  });

  it.each([
    ['atomic', true, 'delete'],
    ['not atomic (a HEAD checks first)', false, 'head'],
  ] as const)(
    'a record taken over after it was listed stays (conditional delete %s)',
    async (_name, atomic, raceOn) => {
      const { clock, store, vault, records, use, keysLeft, keyOf } = await setUp(atomic);
      await use('reused');
      clock.t += TTL + SKEW;
      const reused = keyOf('reused');
      const name = reused.slice(-64);
      store.before = async (op, key) => {
        if (op !== raceOn || key !== reused) return;
        store.before = undefined;
        await store.inner.put(key, records.seal(name, encode('taken over')));
      };
      await use('another');
      expect(store.before).toBeUndefined(); // the race ran
      expect(await keysLeft()).toContain(reused);
      expect(await openedAt(store, records, reused)).toBe('taken over');
      await vault.close();
    },
  );
});

async function openedAt(store: ObjectStore, records: UserRecords, key: string): Promise<string> {
  return Buffer.from(await records.open(key.slice(-64), (await store.get(key))!.body)).toString('utf8');
}
