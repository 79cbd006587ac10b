/**
 * Mutation-testing targets: the modules where a silent regression is a security or data-loss
 * defect. Each target is mutated on its own, against only the fast test files that cover it
 * (vitest.stryker.config.mjs reads MUTATION_TARGET), with its own incremental file under
 * reports/mutation/ so that a rerun only tests mutants whose code or covering tests changed.
 *
 * `threshold`: the lowest acceptable mutation score in percent (scripts/mutation/check.mjs).
 * `equivalent`: survivors that no test can kill because the mutant behaves exactly like the
 * original. Each names the file, the mutator and the replacement Stryker prints, the original code
 * the mutant replaces (`code`) and, when that code occurs more than once in the file, a piece of its
 * source line (`near`), and why it is equivalent. No line numbers: they move with every edit above
 * (scripts/mutation/score.mjs matches the code; `mutation:check` names entries that match nothing). They are counted apart (not in the score's denominator) and listed in
 * docs/testing.md. A listed mutant that a test later kills is simply killed.
 */

/** @typedef {{ file: string, mutator: string, replacement: string, code: string, near?: string, reason: string }} Equivalent */
/** @typedef {{ name: string, mutate: string[], tests: string[], threshold: number, equivalent: Equivalent[] }} Target */

/** @type {Target[]} */
export const targets = [
  {
    name: 'path-guard',
    mutate: ['src/pipeline/path-guard.ts'],
    // Not path-guard.corpus (vault round trips, 9 s) nor path-guard.property (fast-check, 7 s): run
    // against each of 671 mutants they take hours. path-guard.mutation runs both corpora straight
    // against the guard instead.
    tests: ['test/pipeline/path-guard.rules.test.ts', 'test/pipeline/path-guard.lookalikes.test.ts', 'test/pipeline/path-guard*.mutation.test.ts'],
    threshold: 95,
    equivalent: [],
  },
  {
    name: 'crypto-format',
    mutate: ['src/crypto/format.ts'],
    tests: ['test/crypto/format*.test.ts', 'test/crypto/content.test.ts', 'test/crypto/names.test.ts', 'test/crypto/keys.test.ts'],
    threshold: 95,
    equivalent: [
      {
        file: 'src/crypto/format.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof label === 'string'",
        reason: 'libsodium crypto_generichash UTF-8-encodes a string message itself: passing the label string unencoded hashes the same bytes',
      },
      {
        file: 'src/crypto/format.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'string'",
        near: "typeof label === 'string'",
        reason: "typeof label === '' is always false: same as the ConditionalExpression above (sodium encodes the string)",
      },
      {
        file: 'src/crypto/format.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'utf8'",
        near: ".update(userId, 'utf8')",
        reason: "Hmac.update(text, '') uses the default encoding, which is UTF-8",
      },
      {
        file: 'src/crypto/format.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'utf8'",
        near: '.update(`${uid}',
        reason: "Hmac.update(text, '') uses the default encoding, which is UTF-8 (only the encoding argument; the label literal on this line is killed)",
      },
    ],
  },
  {
    name: 'quota',
    mutate: ['src/pipeline/quota*.ts'],
    tests: ['test/pipeline/quota.test.ts', 'test/pipeline/quota.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'edit-text',
    mutate: ['src/tool/text.ts', 'src/tool/commands/edit.ts'],
    tests: ['test/tool/commands.test.ts', 'test/tool/edit-bounds.test.ts', 'test/tool/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'crypto-codec',
    mutate: ['src/crypto/codec.ts'],
    tests: [
      'test/crypto/content.test.ts',
      'test/crypto/names.test.ts',
      'test/crypto/format-vector.test.ts',
      'test/crypto/keys.test.ts',
      'test/crypto/user-id.test.ts',
      'test/crypto/operations.test.ts',
      'test/crypto/*.mutation.test.ts',
    ],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'audit-chain',
    mutate: ['src/audit/chain.ts', 'src/audit/verify.ts'],
    tests: ['test/audit/chain.test.ts', 'test/audit/tamper.test.ts', 'test/audit/authenticated.test.ts', 'test/audit/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 's3-conditions',
    mutate: ['src/store/s3/errors.ts'],
    tests: ['test/s3/faults.test.ts', 'test/s3/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'pii',
    mutate: ['src/pii/**/*.ts'],
    tests: [
      'test/pii/detectors.test.ts',
      'test/pii/engine.test.ts',
      'test/pii/forms.test.ts',
      'test/pii/edits.test.ts',
      'test/pii/paths.test.ts',
      'test/pii/*.mutation.test.ts',
    ],
    threshold: 85,
    equivalent: [],
  },
];

export function targetByName(name) {
  const target = targets.find((t) => t.name === name);
  if (!target) throw new Error(`unknown mutation target '${name}' (known: ${targets.map((t) => t.name).join(', ')})`);
  return target;
}

export const reportDir = 'reports/mutation';
/** Stryker's incremental file is a full mutation-testing report: the score is read from it too. */
export const incrementalFileOf = (name) => `${reportDir}/${name}.json`;
