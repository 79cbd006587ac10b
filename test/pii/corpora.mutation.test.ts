/**
 * The engine's exact decisions on every text of the corpora (the generated notes, the hand-written
 * notes, the public samples of other projects and libphonenumber's example numbers), pinned span by
 * span in corpora.mutation.golden.json, for mutation testing (scripts/mutation/targets.mjs, the pii
 * targets). The corpus and public tests hold floors on recall and precision, which a change that
 * loses or adds one value in a thousand passes; here any change of any span on any text fails: a
 * value that leaks, a value cut shorter or longer, a new false alarm. The texts are stored in the
 * golden file with their findings, so this file imports nothing but src/pii (Stryker runs it once
 * per mutant: no generator, no libphonenumber metadata).
 *
 * The golden file was made from the engine as it was when the file was written, after the corpus
 * and public tests (their floors, and their lists of knowingly missed values) had passed on it.
 * After a deliberate change of the detectors, regenerate it and read the diff, value by value:
 *   UPDATE_PII_GOLDEN=1 npx vitest run test/pii/corpora.mutation.test.ts
 * which also writes the golden file's SHA-256 into GOLDEN_SHA256 below: a new golden file changes
 * this test file, so the mutation reports of the targets that list it are out of date (Stryker and
 * mutation:check compare the test files, not the data they read).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';
import type { PiiFinding, RedactOptions } from '../../src/pii/types.js';

interface GoldenText {
  /** Where the text comes from: a note id, or a public source and its reference. */
  ref: string;
  text: string;
  ipAddresses?: 'all';
  /** "TYPE start end" per finding, in order. */
  findings: string[];
}

const GOLDEN_SHA256 = 'f9a895cdb533c678437a537a8415459f7d2d30882594faaececc016747702dc1';
const GROUP = 8;
const goldenFile = join(dirname(fileURLToPath(import.meta.url)), 'corpora.mutation.golden.json');

const describeFinding = (f: PiiFinding): string => `${f.type} ${f.start} ${f.end}`;
const optionsOf = (g: Pick<GoldenText, 'ipAddresses'>): RedactOptions =>
  g.ipAddresses ? { ipAddresses: g.ipAddresses } : {};

async function regenerate(): Promise<void> {
  const { loadCorpus } = await import('./corpus/score.js');
  const { loadHandwritten } = await import('./corpus/handwritten.js');
  const { loadPublicSamples, loadExcludedSamples, libphonenumberSamples } = await import('./public/score.js');
  const texts: Array<Omit<GoldenText, 'findings'>> = [];
  for (const note of [...loadCorpus(), ...loadHandwritten()]) {
    texts.push({ ref: note.id, text: note.text });
    // The notes in the other IP mode as well: the two modes differ exactly on the reserved ranges.
    texts.push({ ref: `${note.id} (every IP)`, text: note.text, ipAddresses: 'all' });
  }
  const samples = [...loadPublicSamples(), ...loadExcludedSamples(), ...libphonenumberSamples()];
  for (const s of samples) {
    // As public.test.ts scores them: Presidio's IP samples in the mode that reports every address.
    texts.push({
      ref: `${s.source} ${s.ref}`,
      text: s.text,
      ...(s.source === 'presidio' && s.type === 'IP_ADDRESS' ? { ipAddresses: 'all' as const } : {}),
    });
    if (s.type === 'IP_ADDRESS')
      texts.push({
        ref: `${s.source} ${s.ref} (other IP mode)`,
        text: s.text,
        ...(s.source === 'presidio' ? {} : { ipAddresses: 'all' as const }),
      });
  }
  const golden: GoldenText[] = texts.map((t) => ({
    ...t,
    findings: redact(t.text, optionsOf(t)).findings.map(describeFinding),
  }));
  const body = `[\n${golden.map((g) => JSON.stringify(g)).join(',\n')}\n]\n`;
  writeFileSync(goldenFile, body);
  const self = fileURLToPath(import.meta.url);
  writeFileSync(
    self,
    readFileSync(self, 'utf8').replace(
      /^const GOLDEN_SHA256 = '[0-9a-f]*';$/m,
      `const GOLDEN_SHA256 = '${sha256(body)}';`,
    ),
  );
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

if (process.env.UPDATE_PII_GOLDEN === '1') await regenerate();
const goldenText = readFileSync(goldenFile, 'utf8');
const golden = JSON.parse(goldenText) as GoldenText[];

describe('the engine on the corpora, span by span', () => {
  // Skipped while regenerating: the constant above is rewritten for the next run.
  it.skipIf(process.env.UPDATE_PII_GOLDEN === '1')('reads the golden file this test file was written for', () => {
    expect(sha256(goldenText)).toBe(GOLDEN_SHA256);
  });

  it('holds the corpora: the notes, the hand-written notes, every public source, the notes and IP samples in both IP modes', () => {
    expect(golden.length).toBeGreaterThan(1000);
    expect(golden.filter((g) => g.findings.length > 0).length).toBeGreaterThan(700);
    const types = new Set(golden.flatMap((g) => g.findings.map((f) => f.split(' ')[0])));
    expect([...types].sort()).toEqual(['CREDIT_CARD', 'EMAIL', 'IBAN', 'IP_ADDRESS', 'PHONE', 'SECRET', 'US_SSN']);
  });

  // Eight texts per test: Stryker's per-test coverage then runs only the groups a mutant's code
  // reads, without the cost of a test per text.
  const groups: Array<[string, GoldenText[]]> = [];
  for (let i = 0; i < golden.length; i += GROUP)
    groups.push([`${golden[i]!.ref} ... (${i}-${Math.min(i + GROUP, golden.length) - 1})`, golden.slice(i, i + GROUP)]);
  it.each(groups)('%s', (_name, texts) => {
    for (const g of texts) {
      const result = redact(g.text, optionsOf(g));
      expect(result.findings.map(describeFinding), g.ref).toEqual(g.findings);
      // The text is the input with each finding replaced by its placeholder, and nothing else changed.
      let expected = '';
      let last = 0;
      for (const f of result.findings) {
        expected += `${g.text.slice(last, f.start)}[REDACTED:${f.type}]`;
        last = f.end;
      }
      expect(result.text, g.ref).toBe(expected + g.text.slice(last));
    }
  });
});
