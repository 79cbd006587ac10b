/**
 * A stored user's TTL class as a host-side rewrite (re-keying) sees it: from the class markers, the
 * longest TTL when several are there (a class change in flight), as the sweeper decides, whatever
 * order the listing gives the classes in.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, TTL_CLASS_TAG_KEY } from '../../src/expiry/config.js';
import { classMarkerKey } from '../../src/expiry/layout.js';
import { MemoryStore } from '../../src/store/memory.js';
import { ManualClock } from '../kit/clock.js';
import { expiryFor } from '../kit/expiry.js';

const USER = 'u/uid1/';
const FILES = `${USER}f/`;

async function storedUser(defaultClass: string, markers: string[]) {
  const clock = new ManualClock();
  const store = new MemoryStore(clock.now);
  for (const name of markers) await store.put(classMarkerKey(USER, name), new Uint8Array(0));
  const expiry = expiryFor(store, clock, { defaultClass, classes: { brief: 7, long: 90 } });
  const access = await expiry.forStoredUser(FILES);
  const ageDays = (days: number) => new Date(clock.now().getTime() - days * DAY_MS);
  return { access, ageDays };
}

describe('ExpiryService.forStoredUser', () => {
  it('with no marker: the default class', async () => {
    const { access, ageDays } = await storedUser('std', []);
    expect(access.writeTags).toEqual({ [TTL_CLASS_TAG_KEY]: 'std' });
    expect(access.isExpired(ageDays(29))).toBe(false);
    expect(access.isExpired(ageDays(31))).toBe(true);
  });

  it('with one marker: its class, shorter than the default or longer', async () => {
    const brief = await storedUser('std', ['brief']);
    expect(brief.access.writeTags).toEqual({ [TTL_CLASS_TAG_KEY]: 'brief' });
    expect(brief.access.isExpired(brief.ageDays(8))).toBe(true);
    const long = await storedUser('std', ['long']);
    expect(long.access.isExpired(long.ageDays(89))).toBe(false);
  });

  // 'a-default' lists before 'brief', 'z-default' after it: the order must not decide.
  it.each(['a-default', 'z-default'])(
    'with the default and a shorter class (default %s): the longer TTL',
    async (name) => {
      const { access, ageDays } = await storedUser(name, [name, 'brief']);
      expect(access.writeTags).toEqual({ [TTL_CLASS_TAG_KEY]: name });
      expect(access.isExpired(ageDays(20))).toBe(false);
      expect(access.isExpired(ageDays(31))).toBe(true);
    },
  );

  it('with two classes besides the default: the longest', async () => {
    const { access, ageDays } = await storedUser('std', ['brief', 'long']);
    expect(access.writeTags).toEqual({ [TTL_CLASS_TAG_KEY]: 'long' });
    expect(access.isExpired(ageDays(60))).toBe(false);
  });

  it('a class this configuration does not know: a CONFIG error, nothing decided', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    await store.put(classMarkerKey(USER, 'gone'), new Uint8Array(0));
    const expiry = expiryFor(store, clock, { classes: { brief: 7 } });
    await expect(expiry.forStoredUser(FILES)).rejects.toMatchObject({ code: 'CONFIG' });
  });
});
