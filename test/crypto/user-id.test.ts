import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_USER_ID_LENGTH, validateUserId as codecValidateUserId } from '../../src/crypto/codec.js';
import { validateUserId } from '../../src/index.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { plainUid } from '../../src/vault/plain-codec.js';
import { caughtSync, expectCode, newVault } from './helpers.js';

const accepted = (id: string): boolean => {
  try {
    validateUserId(id);
    return true;
  } catch {
    return false;
  }
};

/** Strings of any UTF-16 code units: lone surrogates, pairs, U+FFFD and ordinary characters mixed. */
const anyUnits = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u)),
      fc.constantFrom('\ufffd', '😀', 'é', 'e\u0301', 'victim', 'a', 'b', '\ud83d\ude00', ' '),
      fc.integer({ min: 0x20, max: 0xffff }).map((u) => String.fromCharCode(u)),
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((parts) => parts.join(''));

describe('user ids: one check, and distinct accepted ids never share storage', () => {
  it('the vault and the codec use the same check', () => {
    expect(codecValidateUserId).toBe(validateUserId);
  });

  it('refuses lone surrogates and U+FFFD, which UTF-8 folds into one uid; accepts the well-formed neighbours', async () => {
    const refused = [
      'victim\ud800',
      'victim\udfff',
      'victim\ufffd',
      '\ud800',
      '\udc00victim',
      'a\ud800b',
      '\ude00\ud83d',
      '\ufffd',
    ];
    const { provider } = await newVault();
    const vault = await createVault({ store: new MemoryStore() });
    for (const id of refused) {
      expectCode(
        caughtSync(() => validateUserId(id)),
        'INVALID_USER',
      );
      expectCode(
        caughtSync(() => provider.uidOf(id)),
        'INVALID_USER',
      );
      expect(() => vault.handlers(id)).toThrow(/user id/);
      expect((await vault.run(id, { command: 'view', path: '/memories' })).code).toBe('INVALID_USER');
      await expect(vault.files(id)).rejects.toMatchObject({ code: 'INVALID_USER' });
    }
    for (const id of [
      'victim',
      'victim\ud83d\ude00',
      'victim😀',
      'victime\u0301',
      'victimé',
      'x'.repeat(MAX_USER_ID_LENGTH),
    ])
      expect(validateUserId(id)).toBe(id);
    expectCode(
      caughtSync(() => validateUserId('x'.repeat(MAX_USER_ID_LENGTH + 1))),
      'INVALID_USER',
    );
    expectCode(
      caughtSync(() => provider.uidOf('x'.repeat(MAX_USER_ID_LENGTH + 1))),
      'INVALID_USER',
    );
    // The case of the report: these three were one user. Now one is a user, the others are refused.
    await vault.run('victim', { command: 'create', path: '/memories/secret.md', file_text: 'victim only' });
    expect((await vault.run('victim\ud800', { command: 'view', path: '/memories/secret.md' })).isError).toBe(true);
    await vault.close();
  });

  it('every accepted id survives UTF-8 unchanged (the encoding the uid hashes is one-to-one on them)', () => {
    fc.assert(
      fc.property(anyUnits, (id) => {
        if (accepted(id)) expect(Buffer.from(id, 'utf8').toString('utf8')).toBe(id);
        else
          expect(
            id.trim() === '' ||
              /[\u0000-\u001f\u007f-\u009f\ufffd]/.test(id) ||
              Buffer.from(id, 'utf8').toString('utf8') !== id,
          ).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: two distinct accepted ids have distinct uids and storage prefixes (encrypted and plain codecs)', async () => {
    const { provider } = await newVault();
    const encryptedPrefix = async (id: string) => (await provider.forUser(id)).filesPrefix;
    await fc.assert(
      fc.asyncProperty(anyUnits, anyUnits, async (a, b) => {
        fc.pre(a !== b && accepted(a) && accepted(b));
        expect(provider.uidOf(a)).not.toBe(provider.uidOf(b));
        expect(plainUid(a)).not.toBe(plainUid(b));
        const [pa, pb] = [await encryptedPrefix(a), await encryptedPrefix(b)];
        expect(pa).not.toBe(pb);
        // Neither prefix contains the other: listing one user never lists the other's files.
        expect(pa.startsWith(pb) || pb.startsWith(pa)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('property: ids that differ only where UTF-8 would fold them are never both accepted', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 8 }),
        fc.integer({ min: 0xd800, max: 0xdfff }),
        fc.string({ maxLength: 8 }),
        (before, unit, after) => {
          const lone = `${before}${String.fromCharCode(unit)}${after}`;
          const folded = `${before}\ufffd${after}`;
          fc.pre(Buffer.from(lone, 'utf8').equals(Buffer.from(folded, 'utf8')));
          expect(accepted(lone) && accepted(folded)).toBe(false);
          expect(accepted(folded)).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
