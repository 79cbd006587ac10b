// A committed mutation report stays current across a Prettier run (scripts/mutation/score.mjs,
// sourceFingerprint): CI compares the code of the mutated and test files with the sources the
// report records, not their text, so that a reformat does not send every target back to Stryker
// for hours; any change to the code still does.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { beforeAll, describe, expect, it } from 'vitest';

type Location = { start: { line: number; column: number }; end: { line: number; column: number } };
type Equivalent = { file: string; mutator: string; replacement: string; code: string; near?: string };
type Score = {
  sourceFingerprint(file: string, text: string): string | undefined;
  sameCode(file: string, recorded: string, current: string): boolean;
  listedEquivalentOf(
    target: { equivalent: Equivalent[] },
    file: string,
    mutant: { mutatorName: string; replacement: string; location: Location },
    source: string,
  ): Equivalent | undefined;
};

const root = resolve(import.meta.dirname, '../..');
let score: Score;
beforeAll(async () => {
  score = (await import(pathToFileURL(join(root, 'scripts/mutation/score.mjs')).href)) as Score;
});

const SOURCE = `/** Whether a name is allowed. */
export function allowed(name: string, limits: { max: number; min: number }): boolean {
  // A hidden name never is.
  if (name.startsWith('.')) return false;
  const parts: Array<string> = name.split('/').filter((p) => p !== '' && p !== '.' && p !== '..' && p.length <= limits.max);
  return parts.length >= limits.min && parts.length <= limits.max && parts.every((p) => p.length > 0) && !parts.includes("x'y");
}
export type Kind = 'file' | 'directory' | 'symbolic-link' | 'hard-link' | 'device';
`;

async function formatted(text: string, printWidth: number): Promise<string> {
  const config = await prettier.resolveConfig(join(root, 'src/index.ts'));
  return prettier.format(text, { ...config, printWidth, filepath: 'src/demo.ts' });
}

const fp = (text: string): string | undefined => score.sourceFingerprint('src/demo.ts', text);

describe('the mutation reports’ source fingerprint', () => {
  it('is the same for every Prettier print width, though the text is not', async () => {
    const wide = await formatted(SOURCE, 160);
    const narrow = await formatted(SOURCE, 60);
    expect(narrow).not.toBe(wide);
    // The narrow form has what Prettier adds when it breaks lines: trailing commas, a `return (`,
    // a leading `|`.
    expect(narrow).toMatch(/,\n\s*\)/);
    expect(narrow).toContain('return (');
    expect(narrow).toMatch(/\n\s*\| 'file'/);
    expect(fp(wide)).toMatch(/^[0-9a-f]{64}$/);
    expect(fp(narrow)).toBe(fp(wide));
    expect(score.sameCode('src/demo.ts', wide, narrow)).toBe(true);
  });

  it('ignores whitespace, a trailing comma and the choice of quotes', () => {
    expect(fp('f(a, b,);\nconst s = "it";\n')).toBe(fp("f(\n  a,\n  b\n);\nconst s = 'it';"));
    expect(fp('const a = [1, 2,];')).toBe(fp('const a = [1, 2];'));
  });

  it('ignores a comment of prose, not a directive', () => {
    const base = fp(SOURCE);
    expect(fp(SOURCE.replace('A hidden name', 'A hidden file'))).toBe(base);
    expect(fp(SOURCE.replace('/** Whether a name is allowed. */', ''))).toBe(base);
    expect(fp(SOURCE.replace('// A hidden name never is.', '// Stryker disable next-line all'))).not.toBe(base);
    expect(fp(SOURCE.replace('// A hidden name never is.', '// @ts-expect-error'))).not.toBe(base);
    expect(fp(`/// <reference types="node" />\n${SOURCE}`)).not.toBe(base);
  });

  it('differs for a change of one token, or of how the same tokens parse', () => {
    const base = fp(SOURCE);
    expect(fp(SOURCE.replace('limits.min', 'limits.max'))).not.toBe(base);
    expect(fp(SOURCE.replace('>= limits.min', '> limits.min'))).not.toBe(base);
    expect(fp(SOURCE.replace("startsWith('.')", "startsWith(',')"))).not.toBe(base);
    // Whitespace inside a string, a template or a regular expression is code.
    expect(fp('const s = `a b`;')).not.toBe(fp('const s = `a  b`;'));
    expect(fp('const r = /a b/;')).not.toBe(fp('const r = /ab/;'));
    // A line break after `return` ends the statement: the same tokens, another program.
    expect(fp('function f() {\n  return x;\n}')).not.toBe(fp('function f() {\n  return\n  x;\n}'));
    // A trailing comma that is an array hole is not dropped: [,] has one element.
    expect(fp('const a = [,];')).not.toBe(fp('const a = [];'));
    // Parentheses that change the grouping count.
    expect(fp('const v = (a + b) * c;')).not.toBe(fp('const v = a + b * c;'));
    expect(fp('const f = () => ({});')).not.toBe(fp('const f = () => {};'));
  });

  it('sameCode: the same text is the same code, an added statement is not', () => {
    expect(score.sameCode('src/demo.ts', SOURCE, SOURCE)).toBe(true);
    expect(score.sameCode('src/demo.ts', SOURCE, `${SOURCE}export const more = 1;\n`)).toBe(false);
  });

  it('a listed equivalent mutant still matches once Prettier has broken its code across lines', () => {
    const listed = {
      file: 'src/demo.ts',
      mutator: 'LogicalOperator',
      replacement: 'ready || fresh',
      code: 'check(ready && fresh, 2)',
      near: 'check(',
    };
    const target = { equivalent: [listed] };
    const mutant = (location: Location) => ({
      mutatorName: 'LogicalOperator',
      replacement: 'ready || fresh',
      location,
    });
    const wide = 'const ok = check(ready && fresh, 2);\n';
    const narrow = 'const ok = check(\n  ready && fresh,\n  2,\n);\n';
    expect(
      score.listedEquivalentOf(
        target,
        'src/demo.ts',
        mutant({ start: { line: 1, column: 12 }, end: { line: 1, column: 36 } }),
        wide,
      ),
    ).toBe(listed);
    expect(
      score.listedEquivalentOf(
        target,
        'src/demo.ts',
        mutant({ start: { line: 1, column: 12 }, end: { line: 4, column: 2 } }),
        narrow,
      ),
    ).toBe(listed);
    // Another piece of code is not the listed one, however it is laid out.
    const other = 'const ok = check(\n  ready && fresh,\n  3,\n);\n';
    expect(
      score.listedEquivalentOf(
        target,
        'src/demo.ts',
        mutant({ start: { line: 1, column: 12 }, end: { line: 4, column: 2 } }),
        other,
      ),
    ).toBeUndefined();
  });
});
