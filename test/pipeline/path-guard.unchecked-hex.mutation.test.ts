/**
 * A '%' that starts no escape, as a decoder reads it that takes whatever follows
 * '%' for hex digits (IIS's invalid-hex bug). '..%bg%qf..' is '..%c0%af..' to it, an overlong '/':
 * refused like '%c0%af' itself; '%1u%1u' is '..', 'a%1vb' is 'a/b'. What that reading makes of
 * ordinary text ('50% off' holds %o as the byte 0x18) is held to the path's structure only, so
 * names with a literal '%' keep working. Every case is checked by the shortcut and the full walk.
 */
import { describe, expect, it } from 'vitest';
import {
  canonicalizePath,
  canonicalizeWithoutShortcut,
  InvalidPathError,
  type PathRule,
} from '../../src/pipeline/path-guard.js';
import { uncheckedHexReading } from '../../src/pipeline/percent-decoding.js';
import { attackPaths, legitimatePaths } from './corpus.js';

function outcome(
  path: string,
  canonicalize = canonicalizePath,
): { rule: PathRule; message: string } | { accepted: string } {
  try {
    return { accepted: canonicalize(path) };
  } catch (error) {
    if (error instanceof InvalidPathError) return { rule: error.rule, message: error.message };
    throw error;
  }
}

const ruleOf = (path: string): PathRule | 'accepted' => {
  const short = outcome(path);
  expect(outcome(path, canonicalizeWithoutShortcut), path).toEqual(short);
  return 'rule' in short ? short.rule : 'accepted';
};

describe('the unchecked-hex reading', () => {
  it("takes each character's distance from '0', 'a' or 'A' (plus ten) for its digit, and keeps the low byte", () => {
    expect(uncheckedHexReading('%bg%qf')).toBe('%c0%af'); // 11·16+16, 26·16+15 = 431 → 0xaf
    expect(uncheckedHexReading('%BG%QF')).toBe('%c0%af');
    expect(uncheckedHexReading('%c1%pc')).toBe('%c1%9c'); // the overlong '\' of the IIS advisories
    expect(uncheckedHexReading('%1u%1v')).toBe('%2e%2f');
    expect(uncheckedHexReading('%zz')).toBe('%53'); // 35·16+35 = 595 → 0x53
    expect(uncheckedHexReading('50% off')).toBe('50%18ff'); // ' ' is -16: (-16·16+24) & 0xff
    expect(uncheckedHexReading('100%.txt')).toBe('100%fdxt'); // '.' is -2: (-32+29) & 0xff
  });

  it("the three ranges meet at 'A' and 'a': '@' and '`' are read by the range below them", () => {
    expect(uncheckedHexReading('%@g')).toBe('%10'); // '@' is 16 past '0': 16·16+16 = 272
    expect(uncheckedHexReading('%Ag')).toBe('%b0'); // 'A' is 10: 10·16+16
    expect(uncheckedHexReading('%`g')).toBe('%a0'); // '`' is 41 past 'A' + 10: 41·16+16 = 672
    expect(uncheckedHexReading('%ag')).toBe('%b0');
    // As the low digit a range's start counts in full (as the high one, 32 apart is 512: no change).
    expect(uncheckedHexReading('%ga')).toBe('%0a'); // 16·16+10 = 266: one byte, written with two digits
    expect(uncheckedHexReading('%gA')).toBe('%0a');
    expect(uncheckedHexReading('%g@')).toBe('%10');
    expect(uncheckedHexReading('%g`')).toBe('%29'); // 16·16+41 = 297
  });

  it("after '%u' four characters make one UTF-16 unit, its low 16 bits", () => {
    expect(uncheckedHexReading('%u001u')).toBe('%u002e');
    expect(uncheckedHexReading('%uffzz')).toBe('%u0153'); // ((15·16+15)·16+35)·16+35 = 65,875
    expect(uncheckedHexReading('%u12')).toBe('%e12'); // too short for a unit: '%u1' as a byte
    expect(uncheckedHexReading('%u0g2e')).toBe('%u102e'); // ends in hex digits, but '0g2e' is no unit
    expect(uncheckedHexReading('%u0g')).toBe('%e0g'); // 'u0' as a byte: (30·16+0) & 0xff
  });

  it('escapes, a doubled % and a % near the end are left alone; nothing to read is undefined', () => {
    expect(uncheckedHexReading('a%2eb%zz%u002E')).toBe('a%2eb%53%u002E');
    for (const text of ['%2e%u002e%41', '%2E%u002E%4F', '%%32%65', '100%', 'a%b', 'plain', '%a%'])
      expect(uncheckedHexReading(text), text).toBeUndefined();
  });
});

describe('names an unchecked-hex decoder reads as a traversal are refused like the escapes it reads', () => {
  it('overlong forms: the IIS payloads, in any case, double-encoded, and through a % it makes', () => {
    for (const name of [
      '..%bg%qf..',
      '%bg%qf',
      '%BG%QF',
      '..%bg%qf..%bg%qfetc',
      '%25bg%25qf',
      '%1lbg%1lqf',
      'draw%awesome',
    ]) {
      expect(outcome(`/memories/${name}`), name).toEqual({
        rule: 'overlong-utf8',
        message: `Error: Invalid path "/memories/${name}": overlong UTF-8 percent-encodings (such as %c0%ae) are not allowed.`,
      });
    }
    expect(ruleOf('/memories/a/..%bg%qf../b')).toBe('overlong-utf8');
  });

  it("separators and '..' it makes", () => {
    for (const name of ['%1u%1u', '.%1u', '%u001u%u001u', '%1U%1U;x'])
      expect(ruleOf(`/memories/${name}`), name).toBe('encoded-traversal');
    for (const name of ['a%1vb', 'a%u001vb', '%1v', 'a%25%31vb'])
      expect(ruleOf(`/memories/${name}`), name).toBe('encoded-separator');
    expect(outcome('/memories/a%1vb')).toMatchObject({
      message: expect.stringContaining('a name may not contain "/" or "\\" in any encoding'),
    });
  });

  it('the reserved directory it makes', () => {
    expect(ruleOf('/memories/%1umemvault')).toBe('reserved');
    expect(ruleOf('/memories/a/%1umemvault')).toBe('accepted'); // deeper names are ordinary
  });
});

describe('what it makes of ordinary text is not held against a name', () => {
  it('controls, invisible names, drives and devices it reads are no traversal: the name is kept as sent', () => {
    const names = [
      '50% off.md', // %o: 0x18
      '10% of total.md',
      '50%off.md', // %of: 0x8f, a C1 control as Latin-1
      '%zz.md',
      '100%.txt',
      '%.md',
      'a%b.md',
      '%update.md',
      '%ufeed.md',
      'a%1g.md', // 0x20: an invisible name once decoded alone
      '%@g', // 0x10
      '%9j', // 0xb3 and others as Latin-1
      'C%3j', // 'C' + 0x4a ('J'): no drive
      'c%2q', // 'c:' to that reading: a drive is no traversal
      'nul%1utxt', // 'nul.txt' to it: nor is a device name
    ];
    for (const name of names) {
      expect(ruleOf(`/memories/${name}`), name).toBe('accepted');
      expect(canonicalizePath(`/memories/notes/${name}`)).toBe(`/memories/notes/${name}`);
    }
  });

  it('the same bytes written as escapes are still refused for what they are', () => {
    expect(ruleOf('/memories/50%18ff.md')).toBe('control-character');
    expect(ruleOf('/memories/%e2%80%8b')).toBe('invisible-name');
    expect(ruleOf('/memories/a%0a.md')).toBe('control-character');
    // Beside an invalid escape too: what the checked decoding reads is checked in full.
    expect(ruleOf('/memories/%18%1g')).toBe('control-character');
    expect(ruleOf('/memories/c%3a%zz')).toBe('drive-or-scheme');
    expect(ruleOf('/memories/nul%2etxt%zz')).toBe('device-name');
  });

  it("the guard's corpora: every legitimate name passes, every IIS payload is refused", () => {
    for (const path of legitimatePaths()) expect(ruleOf(path), path).toBe('accepted');
    const payloads = attackPaths().filter((a) => a.family === 'unchecked hex digits');
    expect(payloads.length).toBeGreaterThan(0);
    for (const { path } of payloads) expect(ruleOf(path), path).not.toBe('accepted');
  });
});
