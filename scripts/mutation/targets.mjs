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
    equivalent: [
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'Regex',
        replacement: '/^[\\x20-\\x7e]$/',
        code: '/^[\\x20-\\x7e]*$/',
        reason:
          'PRINTABLE_ASCII only chooses the fast path: a printable-ASCII path sent down the non-ASCII path gets the same answers (its UTF-8 length is its length, it has no surrogate or control, it is its own NFC)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'Regex',
        replacement: '/^[A-Za-z0-9_.\\- ]$/',
        code: '/^[A-Za-z0-9_.\\- ]+$/',
        reason:
          'PLAIN_ASCII only chooses the fast path: a plain name sent through the full walk has itself as its only form, and checkForm gives it the same rules and messages (dots-and-spaces, device-name)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'PLAIN_ASCII.test(segment) && !HEX_TEXT.test(segment)',
        reason: 'the same fast path switched off: the full walk gives plain names the same answers',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'BlockStatement',
        replacement: '{}',
        code: "{\n    // No separator, control, '%', '+', ':' or non-ASCII: only the dots and device-name rules apply.\n    if (DOTS_AND_SPACES.test(segment)) reject(raw, 'dots-and-spaces', 'a name may not consist only of dots and spaces (nor before \";\", \"?\", \"#\" or \":\").');\n    if (WINDOWS_DEVICE.test(segment)) reject(raw, 'device-name', 'reserved device names (CON, NUL, COM1, ...) are not allowed as names.');\n    return [segment];\n  }",
        reason: 'the same fast path emptied: the full walk that follows gives plain names the same answers',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '``',
        code: '`${IGNORABLE.source}|${SLASH_LIKE.source}|${BACKSLASH_LIKE.source}|${DOT_LIKE.source}`',
        reason:
          'SUSPICIOUS only skips four replace calls: an empty pattern matches everything, and the replacements change nothing in text without those characters',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: '!SUSPICIOUS.test(folded)',
        reason: 'the same shortcut removed: the four replacements change nothing in text without those characters',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ArrayDeclaration',
        replacement: '["Stryker was here"]',
        code: '[]',
        reason: 'unreachable: `run` is a match of ESCAPES, so matching its escapes again always finds at least one',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'bytes.length === 0',
        reason: 'decoding no bytes gives empty text, not overlong: flushing an empty run changes nothing',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ArrayDeclaration',
        replacement: '[]',
        code: '[-1, 0]',
        reason:
          'a lead byte that starts nothing (0xfe, 0xff, 0x80-0xbf): with no class, `extra >= 0` is false as for -1, and the byte takes the same Latin-1 fallback',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'lead > 0xc0',
        code: 'lead >= 0xc0',
        reason:
          'only 0xc0 changes class, and 0xc0 is refused as overlong whatever its class (the C0/C1 check below; in the tag-blind reading too, since both readings run on the same bytes)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'lead >= 0x80',
        reason:
          'the last two classes (a lone continuation byte: Latin-1 fallback; an ASCII byte: one-byte sequence) both yield String.fromCharCode(lead): swapping them changes no text',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'lead >= 0x80',
        reason: 'as above: both classes yield String.fromCharCode(lead)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'lead > 0x80',
        code: 'lead >= 0x80',
        reason: 'as above: both classes yield String.fromCharCode(lead)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'lead < 0x80',
        code: 'lead >= 0x80',
        reason: 'as above: both classes yield String.fromCharCode(lead)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ArrayDeclaration',
        replacement: '[]',
        code: '[0, 0]',
        reason: 'an ASCII byte with no class takes the Latin-1 fallback, which yields the same character',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'extra > 0',
        code: 'extra >= 0',
        reason: 'ASCII bytes (extra 0) then take the Latin-1 fallback, which yields the same character',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'b === undefined',
        reason: '(undefined & 0xc0) is 0, not 0x80: the tag check alone refuses a missing byte',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'cp >= 0x10ffff',
        code: 'cp > 0x10ffff',
        reason:
          'U+10FFFF (a noncharacter) becomes U+FFFD: both are visible and neither is a separator, dot, control, mark or ignorable, so no rule reads them differently',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'lead <= 0xf0',
        code: 'lead < 0xf0',
        reason: 'tag-blind classes: 0xf0 is taken by the four-byte branch before this test',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'lead <= 0xe0',
        code: 'lead < 0xe0',
        reason: 'tag-blind classes: 0xe0 is taken by the three-byte branch before this test',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: "form.includes('%')",
        reason: 'decoding a form without escapes gives the form itself, which is already seen',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'%'",
        near: "form.includes('%')",
        reason: "as above: includes('') is always true, and decoding a form without escapes gives the form itself",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: "form.includes('+')",
        reason: "replacing '+' in a form without one gives the form itself, which is already seen",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'+'",
        reason: "as above: includes('') is always true, and the replacement gives the form itself",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'HEX_TEXT.test(form)',
        reason: 'replacing HEX_TEXT matches in a form without one gives the form itself, which is already seen',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'Regex',
        replacement: '/&#x?|;$|^0x/gi',
        code: '/^&#x?|;$|^0x/gi',
        reason: 'the pattern strips one HEX_TEXT match, which begins with "&#" or "0x" and ends with ";" only if a reference: the anchors change nothing',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'Regex',
        replacement: '/^&#x?|;|^0x/gi',
        code: '/^&#x?|;$|^0x/gi',
        reason: 'as above',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'Regex',
        replacement: '/^&#x?|;$|0x/gi',
        code: '/^&#x?|;$|^0x/gi',
        reason: 'as above ("0x" occurs in a match only at its start)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'Regex',
        replacement: '/&#\\d/',
        code: '/^&#\\d/',
        reason: 'as above: "&#" occurs in a match only at its start',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'end >= 0',
        code: 'end > 0',
        reason: "at end 0 the name before it is '' and DOTS_AND_SPACES needs at least one character",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: '!ascii',
        reason: 'printable-ASCII paths pass those three checks anyway (length = UTF-8 length, no surrogate, no control)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'utf8'",
        near: 'Buffer.byteLength(',
        reason: "Buffer.byteLength(text, '') counts UTF-8, the default",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'raw === MEMORY_ROOT',
        reason: "'/memories' then splits into [''], which the trailing-slash rule pops: no segments either way",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'parts.length > 0',
        reason: "with no parts, parts[-1] is undefined, not '': nothing is popped either way",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'parts.length >= 0',
        code: 'parts.length > 0',
        reason: 'as above',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'memvau~1'",
        reason: 'the length test is a shortcut: no form shorter than 8 characters can be .memvault or an 8.3 name MEMVAU~n',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'form.length < RESERVED_SHORT_NAME_LENGTH',
        reason: 'as above: the shortcut removed',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: "part !== ''",
        reason: "isTraversalName('') is false: empty parts between soft separators are never a traversal",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '"Stryker was here!"',
        code: "''",
        near: 'form.split(SOFT_SEPARATOR)',
        reason: 'as above',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'segment.length * 3 > MAX_SEGMENT_BYTES',
        reason: 'a cheap pre-test (UTF-8 has at most 3 bytes per UTF-16 unit); the byte count after it decides alone',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'segment.length * 3 >= MAX_SEGMENT_BYTES',
        code: 'segment.length * 3 > MAX_SEGMENT_BYTES',
        reason: 'as above: at exactly 85 units the byte count is at most 255 and passes either way',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'MethodExpression',
        replacement: "raw.endsWith('\\\\\\\\')",
        code: "raw.startsWith('\\\\\\\\')",
        reason: 'unreachable: a path with any backslash is refused by the backslash rule before the outside-root reason is chosen',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof raw === 'string' && raw.length <= MAX_PATH_BYTES && ALREADY_CANONICAL.test(raw)",
        reason: 'the one-regex shortcut switched off: the full walk gives the same answer (the property test and every test here compare the two)',
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'string'",
        near: 'ALREADY_CANONICAL.test(raw)',
        reason: "as above: typeof raw is never '', so the shortcut is off",
      },
      {
        file: 'src/pipeline/path-guard.ts',
        mutator: 'EqualityOperator',
        replacement: 'raw.length < MAX_PATH_BYTES',
        code: 'raw.length <= MAX_PATH_BYTES',
        reason: 'a canonical path of exactly 4,096 characters then takes the full walk, which accepts it too',
      },
    ],
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
    tests: ['test/pipeline/quota.test.ts', 'test/pipeline/quota*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/pipeline/quota.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'utf8'",
        near: 'Buffer.byteLength(command.file_text',
        reason: "Buffer.byteLength's default encoding is UTF-8",
      },
      {
        file: 'src/pipeline/quota-usage.ts',
        mutator: 'BooleanLiteral',
        replacement: 'true',
        code: 'false',
        near: 'stale: false',
        reason: 'a new entry is not loaded, so its usage is due for a listing whatever `stale` says, and the listing sets stale to false',
      },
    ],
  },
  {
    name: 'edit-text',
    mutate: ['src/tool/text.ts', 'src/tool/commands/edit.ts'],
    // Not commands.test.ts (the whole tool suite on two stores, 32 s a run on a loaded machine, hours
    // over every mutant): the mutation test files assert the same edges straight, and concurrency.test.ts
    // the lost-answer retry.
    // Not edit-bounds.test.ts either: its quadratic-input and 300,000-line cases exceed the 30 s test
    // timeout under Stryker's instrumentation (the dry run fails).
    tests: ['test/tool/concurrency.test.ts', 'test/tool/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'text.length > MAX_LINES',
        reason:
          'a pre-test that only skips counting lines: a text of at most 999,999 characters cannot have more than 999,999 lines, so counting them gives the same answer',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'EqualityOperator',
        replacement: 'text.length >= MAX_LINES',
        code: 'text.length > MAX_LINES',
        reason: 'as above: a text of exactly 999,999 characters has at most 999,999 lines, so the count that follows refuses nothing more',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'path === MEMORY_ROOT',
        near: "fail('NOT_A_FILE', messages.rootIsDirectory('create'))",
        reason:
          "two copies of the root check (create's own, before it takes the tree lock, and assertWritablePath's): with either removed the other refuses the root with the same code and message (rename refuses the root as a destination before calling assertWritablePath)",
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'NOT_A_FILE'",
        near: "fail('NOT_A_FILE', messages.rootIsDirectory('create'))",
        reason: 'unreachable in assertWritablePath: create checks the root first and rename refuses it as a destination first (the copy in create is killed)',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'create'",
        near: "fail('NOT_A_FILE', messages.rootIsDirectory('create'))",
        reason: 'as above: the root check in assertWritablePath is never reached with the root',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ObjectLiteral',
        replacement: '{}',
        code: '{ a, file: (await env.files.stat(a)) !== null }',
        reason:
          "defence in depth: the vault's name check (src/vault/names.ts) refuses a write below a file with the same code (NOT_A_DIRECTORY) and message, and rolls the write back; this check only answers before the write",
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: '(await env.files.stat(a)) !== null',
        reason: "as above: the vault's name check gives the same answer",
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ArrowFunction',
        replacement: '() => undefined',
        code: '(x) => x.file',
        reason: "as above: the vault's name check gives the same answer",
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'fileAncestor',
        near: 'if (fileAncestor)',
        reason: "as above: the vault's name check gives the same answer",
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'UnaryOperator',
        replacement: '+1',
        code: '-1',
        near: 'let first',
        reason: 'first is set by the first match before it is read (only from the second match on)',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'count === 2',
        reason:
          "noting the first match's line again at every later match is a no-op: LineCounter never goes back, so it returns the line just noted, which noteLine skips",
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'stored === undefined || stored === oldStr',
        reason:
          'returning the stored form always changes nothing: undefined stays undefined, and a stored form equal to old_str is searched again and found nowhere, as before',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'LogicalOperator',
        replacement: 'stored === undefined && stored === oldStr',
        code: 'stored === undefined || stored === oldStr',
        reason: 'as above: the stored form is returned, which is undefined or old_str itself (not found again)',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'stored === undefined',
        reason: 'as above: undefined is returned as itself',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'stored === oldStr',
        reason: 'as above: old_str itself is searched again and found nowhere',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'nl === -1',
        near: "return '';",
        reason:
          'unreachable: the walk stops before the first line it shows, which is at most the line of the change, so every line before it ends with a line break',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'UnaryOperator',
        replacement: '+1',
        code: '-1',
        near: "if (nl === -1) return '';",
        reason: 'unreachable, as above',
      },
      {
        file: 'src/tool/commands/edit.ts',
        mutator: 'StringLiteral',
        replacement: '"Stryker was here!"',
        code: "''",
        near: 'if (nl === -1) return',
        reason: 'unreachable, as above',
      },
      {
        file: 'src/tool/text.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'needle.length === 0 || needle.length > text.length',
        reason:
          'a shortcut: the matcher finds nothing for a needle longer than the text, and for the empty needle (str_replace refuses it before) it finds nothing either (its pattern has no character to match)',
      },
      {
        file: 'src/tool/text.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'needle.length === 0',
        reason: 'as above: an empty needle finds nothing in the matcher either',
      },
      {
        file: 'src/tool/text.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'needle.length > text.length',
        reason: 'as above: a needle longer than the text is never matched to its end',
      },
      {
        file: 'src/tool/text.ts',
        mutator: 'EqualityOperator',
        replacement: 'i <= end',
        code: 'i < end',
        near: 'for (; i < end; i++)',
        reason: 'each scan slice takes one character more; the next slice starts after it, so every character is still read once in order',
      },
      {
        file: 'src/tool/text.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'k === 0',
        near: 'if (k === 0)',
        reason: 'the native indexOf skip only speeds up the search while nothing is matched: the KMP step that follows finds the same matches',
      },
      {
        file: 'src/tool/text.ts',
        mutator: 'BlockStatement',
        replacement: '{}',
        code: "{\n        // Nothing matched yet: let the native search skip to the needle's first character.\n        const next = text.indexOf(head, i);\n        if (next === -1) return true;\n        i = next;\n      }",
        reason: 'as above: without the skip the KMP step reads every character and finds the same matches',
      },
    ],
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
    equivalent: [
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: '!memo',
        reason:
          'the name memo caches a pure function (the same segment under the same parent always encrypts and decrypts the same way): without it, or with a new memo per codec, the answers are the same, only computed again',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'CallExpression',
        replacement: ';',
        code: 'nameMemos.set(cached, memo);',
        reason:
          'the name memo caches a pure function (the same segment under the same parent always encrypts and decrypts the same way): without it, or with a new memo per codec, the answers are the same, only computed again',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'encrypted === undefined',
        reason:
          'the name memo caches a pure function (the same segment under the same parent always encrypts and decrypts the same way): without it, or with a new memo per codec, the answers are the same, only computed again',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'CallExpression',
        replacement: ';',
        code: 'this.memo.encrypted.set(memoKey, encrypted);',
        reason:
          'the name memo caches a pure function (the same segment under the same parent always encrypts and decrypts the same way): without it, or with a new memo per codec, the answers are the same, only computed again',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'segment === undefined',
        reason:
          'the name memo caches a pure function (the same segment under the same parent always encrypts and decrypts the same way): without it, or with a new memo per codec, the answers are the same, only computed again',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'CallExpression',
        replacement: ';',
        code: 'this.memo.decrypted.set(memoKey, segment);',
        reason:
          'the name memo caches a pure function (the same segment under the same parent always encrypts and decrypts the same way): without it, or with a new memo per codec, the answers are the same, only computed again',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'utf8'",
        near: 'Buffer.byteLength(key',
        reason: "Buffer.byteLength's default encoding is UTF-8",
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'path === MEMORIES_ROOT',
        near: 'does not belong to this user',
        reason: "unreachable: the loop appends '/' and a segment at least once (splitting '' gives one segment), so the path is never /memories",
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'INTEGRITY'",
        near: "if (path === MEMORIES_ROOT) throw new MemvaultError('INTEGRITY'",
        reason: 'unreachable, as above',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'StringLiteral',
        replacement: '""',
        code: "'Error: A stored object does not belong to this user.'",
        near: 'if (path === MEMORIES_ROOT) throw',
        reason: 'unreachable, as above',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'version === null',
        near: 'this.keyring.byVersion.get(version)',
        reason: 'byVersion.get(null) is undefined too: the same integrity error',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'this.closed',
        near: 'if (this.closed) return;',
        reason: 'closing twice wipes already-wiped buffers and clears an empty cache again: nothing changes',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'CallExpression',
        replacement: ';',
        code: 'wipe(opened.secret);',
        reason:
          "opened.secret is the current version's entry of the secrets map (readUserSecret and readOrCreateUserSecret put the same buffer in both), which the loop above wipes (the pin refusal's copy of this line is killed)",
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: "e instanceof MemvaultError && e.code === 'INTEGRITY'",
        reason:
          'DEPLOYMENT_RECORD_INTEGRITY_MESSAGE is only ever thrown as a MemvaultError with code INTEGRITY (readDeployment), so the message test alone decides',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'LogicalOperator',
        replacement: "e instanceof MemvaultError || e.code === 'INTEGRITY'",
        code: "e instanceof MemvaultError && e.code === 'INTEGRITY'",
        reason:
          'DEPLOYMENT_RECORD_INTEGRITY_MESSAGE is only ever thrown as a MemvaultError with code INTEGRITY (readDeployment), so the message test alone decides',
      },
      {
        file: 'src/crypto/codec.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: "e.code === 'INTEGRITY'",
        reason:
          'DEPLOYMENT_RECORD_INTEGRITY_MESSAGE is only ever thrown as a MemvaultError with code INTEGRITY (readDeployment), so the message test alone decides',
      },
    ],
  },
  {
    name: 'audit-chain',
    mutate: ['src/audit/chain.ts', 'src/audit/verify.ts'],
    // Not authenticated.test.ts (108 s a run: it starts memvault processes): verify.mutation.test.ts
    // asserts every MAC and witness rule straight against verify.
    tests: ['test/audit/chain.test.ts', 'test/audit/tamper.test.ts', 'test/audit/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/audit/verify.ts',
        mutator: 'EqualityOperator',
        replacement: 'record.seq >= expectedSeq',
        code: 'record.seq > expectedSeq',
        reason: 'inside `record.seq !== expectedSeq`: the two are never equal there',
      },
    ],
  },
  {
    name: 's3-conditions',
    mutate: ['src/store/s3/errors.ts'],
    tests: ['test/s3/faults.test.ts', 'test/s3/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  // src/pii in seven targets (5,434 mutants in all after the spelt-address and 5-4 SSN rules), each against the fast tests that import only
  // src/pii: not the vault round trips of forms, edits and paths (3 to 4 s of imports per run, and
  // every static mutant runs every covering file), nor the corpus and public floors (their
  // generator and libphonenumber's metadata per run): corpora.mutation pins the engine's exact
  // spans on the same texts instead.
  {
    name: 'pii-engine',
    mutate: ['src/pii/chars.ts', 'src/pii/engine.ts', 'src/pii/normalize.ts', 'src/pii/types.ts', 'src/pii/index.ts'],
    tests: ['test/pii/engine.test.ts', 'test/pii/detectors.test.ts', 'test/pii/corpora.mutation.test.ts', 'test/pii/engine*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'pii-edit',
    mutate: ['src/pii/edit.ts'],
    tests: ['test/pii/window.test.ts', 'test/pii/edit*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'pii-card-iban',
    mutate: ['src/pii/detectors/card.ts', 'src/pii/detectors/iban.ts'],
    tests: ['test/pii/detectors.test.ts', 'test/pii/card-iban*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/pii/detectors/iban.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: "typeof spec.chars === 'number'",
        reason:
          "ibantools has no country whose length is 0: its 124 IBAN countries have a positive length, the other 126 have null (typeof 'object', and null > 0 is false), so each half of the filter alone, or >= 0, keeps the same countries",
      },
      {
        file: 'src/pii/detectors/iban.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'spec.chars > 0',
        reason:
          "ibantools has no country whose length is 0: its 124 IBAN countries have a positive length, the other 126 have null (typeof 'object', and null > 0 is false), so each half of the filter alone, or >= 0, keeps the same countries",
      },
      {
        file: 'src/pii/detectors/iban.ts',
        mutator: 'EqualityOperator',
        replacement: 'spec.chars >= 0',
        code: 'spec.chars > 0',
        reason:
          "ibantools has no country whose length is 0: its 124 IBAN countries have a positive length, the other 126 have null (typeof 'object', and null > 0 is false), so each half of the filter alone, or >= 0, keeps the same countries",
      },
      {
        file: 'src/pii/detectors/iban.ts',
        mutator: 'LogicalOperator',
        replacement: "typeof spec.chars === 'number' || spec.chars > 0",
        code: "typeof spec.chars === 'number' && spec.chars > 0",
        reason:
          "ibantools has no country whose length is 0: its 124 IBAN countries have a positive length, the other 126 have null (typeof 'object', and null > 0 is false), so each half of the filter alone, or >= 0, keeps the same countries",
      },
    ],
  },
  {
    name: 'pii-ip',
    mutate: ['src/pii/detectors/ip.ts', 'src/pii/detectors/context.ts'],
    // Not corpora.mutation, as for pii-phone: the address and version words are module-level
    // regexes (static mutants: every test runs against each).
    tests: ['test/pii/detectors.test.ts', 'test/pii/ip*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'pii-email-ssn',
    mutate: ['src/pii/detectors/email.ts', 'src/pii/detectors/ssn.ts'],
    tests: ['test/pii/detectors.test.ts', 'test/pii/corpora.mutation.test.ts', 'test/pii/email*.mutation.test.ts', 'test/pii/ssn*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'pii-phone',
    mutate: ['src/pii/detectors/phone.ts'],
    // Not corpora.mutation: most of phone.ts's mutants are in module-level regexes (static: every
    // test runs against each), and the corpora take seconds a run; phone.mutation asserts each
    // word, edge and region straight.
    tests: ['test/pii/detectors.test.ts', 'test/pii/phone*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'n >= 6',
        near: 'DE: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'n > 6',
        code: 'n >= 6',
        near: 'DE: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'n >= 6',
        near: 'IT: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'n > 6',
        code: 'n >= 6',
        near: 'IT: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'n >= 5',
        near: 'AT: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'n > 5',
        code: 'n >= 5',
        near: 'AT: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'n >= 7',
        near: 'IE: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'n >= 7',
        near: 'SE: (f, n)',
        reason:
          "no caller asks about fewer than 7 digits: scanPhone drops a run below MIN_DIGITS (7) before the table, and isNationalPhoneAsGrouped is only given the SSN detector's nine-digit XXX-XXXXXX form",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'c === 0xa0',
        near: 'lastWasSeparator',
        reason: 'the detectors read the folded view (normalize.ts), where U+00A0 is already a space',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'c === 0xa0',
        near: 'return c === 32',
        reason: 'the detectors read the folded view (normalize.ts), where U+00A0 is already a space',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'before === 95',
        reason: "'_' is a word character: isWordChar(before) refuses it first",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'digits > MAX_DIGITS',
        near: 'if (digits > MAX_DIGITS) break;',
        reason:
          'a run past 15 digits is skipped whole after the loop (digits > MAX_DIGITS, then skipCluster), whether the loop stops at the 16th digit or at the 26-character bound',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'UpdateOperator',
        replacement: 'i--',
        code: 'i++',
        near: 'if (codeAt(text, i) === 32) i++;',
        reason: "unreachable: START opens at '+' only when a digit follows it, so after the '+' there is never a space or a bracket",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'codeAt(text, i) !== 40',
        reason: "unreachable: START opens at '+' only when a digit follows it, so after the '+' there is never a space or a bracket",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'codeAt(text, i) === 40',
        code: 'codeAt(text, i) !== 40',
        reason: "unreachable: START opens at '+' only when a digit follows it, so after the '+' there is never a space or a bracket",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ArithmeticOperator',
        replacement: 'start - 1',
        code: 'start + 1',
        near: 'if (!isDigit(codeAt(text, i)) && codeAt(text, i) !== 40) return start + 1;',
        reason: "unreachable: START opens at '+' only when a digit follows it, so after the '+' there is never a space or a bracket",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'c.priority >= PHONE_PRIORITY',
        code: 'c.priority > PHONE_PRIORITY',
        reason: "no other detector has the phone detector's priority (40)",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'codeAt(text, i) === 32',
        reason: "unreachable: START opens at '+' only when a digit follows it, so after the '+' there is never a space or a bracket",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: '!isDigit(codeAt(text, i)) && codeAt(text, i) !== 40',
        reason: "unreachable: START opens at '+' only when a digit follows it, so after the '+' there is never a space or a bracket",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'BooleanLiteral',
        replacement: 'false',
        code: 'true',
        near: 'let lastWasSeparator = true;',
        reason: "a run opens with a digit, '(' or '+' and a digit (START), so no separator can come first whatever the initial value",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'UnaryOperator',
        replacement: '+1',
        code: '-1',
        near: 'let lastSep = -1;',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'BooleanLiteral',
        replacement: 'true',
        code: 'false',
        near: 'let mixedSeparators = false;',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'i < text.length',
        near: 'while (i < text.length && i - start < MAX_LENGTH) {',
        reason: 'charCodeAt past the end is NaN, which is no digit, bracket or separator: the loop stops there anyway',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'i <= text.length',
        code: 'i < text.length',
        near: 'while (i < text.length && i - start < MAX_LENGTH) {',
        reason: 'charCodeAt past the end is NaN, which is no digit, bracket or separator: the loop stops there anyway',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'lastSep !== -1 && lastSep !== c',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'LogicalOperator',
        replacement: 'lastSep !== -1 || lastSep !== c',
        code: 'lastSep !== -1 && lastSep !== c',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'lastSep !== -1',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'lastSep === -1',
        code: 'lastSep !== -1',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'UnaryOperator',
        replacement: '+1',
        code: '-1',
        near: 'if (lastSep !== -1 && lastSep !== c) mixedSeparators = true;',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'lastSep !== c',
        reason:
          "mixedSeparators only matters for a run with both '/' and '.' (the check after it), which has then seen two different separators: every way of computing it more eagerly gives the same answer there",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'i < text.length',
        near: 'while (i < text.length && i - open <= 6 && isDigit(text.charCodeAt(i))) i++;',
        reason: 'charCodeAt past the end is NaN, which is no digit, bracket or separator: the loop stops there anyway',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'i <= text.length',
        code: 'i < text.length',
        near: 'while (i < text.length && i - open <= 6 && isDigit(text.charCodeAt(i))) i++;',
        reason: 'charCodeAt past the end is NaN, which is no digit, bracket or separator: the loop stops there anyway',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'i < text.length && isDigit(text.charCodeAt(i))',
        reason: 'skip only saves restarts: a start inside the same digits has a digit before it and is skipped again',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'i < text.length',
        near: 'while (i < text.length && isDigit(text.charCodeAt(i))) i++;',
        reason: 'charCodeAt past the end is NaN, which is no digit, bracket or separator: the loop stops there anyway',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'i <= text.length',
        code: 'i < text.length',
        near: 'while (i < text.length && isDigit(text.charCodeAt(i))) i++;',
        reason: 'charCodeAt past the end is NaN, which is no digit, bracket or separator: the loop stops there anyway',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'i >= text.length',
        code: 'i < text.length',
        near: 'while (i < text.length && isDigit(text.charCodeAt(i))) i++;',
        reason: 'as `false`: the loop never runs; a start inside the same digits has a digit before it and is skipped again',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'after === 37',
        reason: "CURRENCY_AFTER lists '%' too and refuses the number the same way",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: '!plus &&\n    !fitsSomeRegion(regions, firstDigitAt(text, start), digitCount) &&\n    (!separatedOrLong(text, start, end) || !(strong ??= hasStrongPhoneContext(text, start)))',
        reason:
          'the gate only saves work: a run that fits no configured region can only be accepted by validInAnyRegion, which needs the same two conditions (grouped or long, and a word that says phone)',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'LogicalOperator',
        replacement: '!separatedOrLong(text, start, end) && !(strong ??= hasStrongPhoneContext(text, start))',
        code: '!separatedOrLong(text, start, end) || !(strong ??= hasStrongPhoneContext(text, start))',
        reason: "as above: what the weaker gate lets through is refused by validInAnyRegion's own two conditions",
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'i < text.length',
        near: 'while (i < text.length && !isDigit(text.charCodeAt(i))) i++;',
        reason: 'the run always holds a digit before its end, where the loop stops',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'EqualityOperator',
        replacement: 'i <= text.length',
        code: 'i < text.length',
        near: 'while (i < text.length && !isDigit(text.charCodeAt(i))) i++;',
        reason: 'the run always holds a digit before its end, where the loop stops',
      },
      {
        file: 'src/pii/detectors/phone.ts',
        mutator: 'Regex',
        replacement: '/[+(]?\\d[\\d ()./\\-\\u00a0]/g',
        code: '/[+(]?\\d[\\d ()./\\-\\u00a0]{6,30}/g',
        reason: "the prefilter's length only keeps short runs from the hand scanner, which reads the run itself and drops it below 7 digits",
      },
    ],
  },
  {
    name: 'pii-secret',
    mutate: ['src/pii/detectors/secret.ts'],
    tests: ['test/pii/detectors.test.ts', 'test/pii/prefilter.test.ts', 'test/pii/corpora.mutation.test.ts', 'test/pii/secret*.mutation.test.ts'],
    threshold: 85,
    equivalent: [],
  },
  {
    name: 'versions',
    mutate: ['src/vault/history.ts', 'src/vault/version-record.ts', 'src/crypto/version-record-format.ts'],
    // Not history.test.ts (78 s a run: it waits out whole-second store clocks between steps):
    // history.mutation.test.ts moves a memory store's clock instead and asserts the same edges.
    tests: ['test/vault/history-units.test.ts', 'test/vault/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: '!parsed',
        reason:
          'a stray key that is no version key gives parsed === null: reading parsed.fileKey inside the try throws, and the catch passes it over as the `continue` does',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'record.keptAt !== undefined',
        reason: 'keptAt: undefined is then copied; its only reader (versionAt) asks `keptAt !== undefined` first',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'pending.length >= 100',
        reason:
          'the batch size only bounds how many files wait in memory before they are restored: flushing after every group, or only once at the end, restores the same files with the same outcomes (the result is sorted after the last flush)',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'pending.length >= 100',
        reason:
          'the batch size only bounds how many files wait in memory before they are restored: flushing after every group, or only once at the end, restores the same files with the same outcomes (the result is sorted after the last flush)',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'EqualityOperator',
        replacement: 'pending.length > 100',
        code: 'pending.length >= 100',
        reason:
          'the batch size only bounds how many files wait in memory before they are restored: flushing after every group, or only once at the end, restores the same files with the same outcomes (the result is sorted after the last flush)',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'EqualityOperator',
        replacement: 'pending.length < 100',
        code: 'pending.length >= 100',
        reason:
          'the batch size only bounds how many files wait in memory before they are restored: flushing after every group, or only once at the end, restores the same files with the same outcomes (the result is sorted after the last flush)',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'EqualityOperator',
        replacement: 'a.path <= b.path',
        code: 'a.path < b.path',
        reason: 'the two paths of one comparison are never equal (one entry per file): `<=` and `<` agree',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'a.path > b.path',
        reason: 'the paths are distinct, so past `a.path < b.path` they are in the other order: 1 either way',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'a.path > b.path',
        reason:
          "V8's sort asks only whether the comparator is below 0 (binary insertion and merge both branch on `< 0`), and the paths of one restore are distinct: a comparator that answers 0 or 1 for every pair not in order sorts the same (checked on 2,000 random arrays of up to 300 names)",
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'EqualityOperator',
        replacement: 'a.path >= b.path',
        code: 'a.path > b.path',
        reason: 'the paths are distinct: `>=` and `>` agree',
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'EqualityOperator',
        replacement: 'a.path <= b.path',
        code: 'a.path > b.path',
        reason:
          "V8's sort asks only whether the comparator is below 0 (binary insertion and merge both branch on `< 0`), and the paths of one restore are distinct: a comparator that answers 0 or 1 for every pair not in order sorts the same (checked on 2,000 random arrays of up to 300 names)",
      },
      {
        file: 'src/vault/history.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'a.byteLength === b.byteLength',
        reason: 'Buffer.equals compares the lengths itself; the test only spares the copy',
      },
      {
        file: 'src/vault/version-record.ts',
        mutator: 'ConditionalExpression',
        replacement: 'true',
        code: 'record.keptAt !== undefined',
        reason: 'JSON.stringify leaves out a field whose value is undefined: `k: undefined` seals the same text',
      },
      {
        file: 'src/vault/version-record.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof s !== 'number'",
        reason: 'Number.isSafeInteger, tested next, is false for every non-number',
      },
      {
        file: 'src/vault/version-record.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof h !== 'string'",
        reason: 'a non-string h never equals the body hash (a string), which is checked below with the same error',
      },
      {
        file: 'src/vault/version-record.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof k !== 'number'",
        reason: 'Number.isSafeInteger, tested next, is false for every non-number',
      },
    ],
  },
  {
    name: 'keys',
    mutate: ['src/crypto/key-cache.ts', 'src/crypto/key-provider.ts', 'src/crypto/wrapped-secret.ts'],
    // Not record-auth.test.ts (one of its cases starts the CLI: 23 s a run): test/crypto/keys/
    // asserts the record rules straight against the modules. Its own folder, so that
    // crypto-codec's test/crypto/*.mutation.test.ts does not take these files in.
    tests: ['test/crypto/keys.test.ts', 'test/crypto/keys/*.mutation.test.ts'],
    threshold: 85,
    equivalent: [
      {
        file: 'src/crypto/key-cache.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: 'entry.wiped',
        near: 'if (entry.wiped) return',
        reason: 'wiping a wiped keyring again zeroes zeroed buffers: nothing changes',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'BlockStatement',
        replacement: '{}',
        code: '{\n    throw damaged();\n  }',
        near: '} catch {',
        reason: 'bytes that do not parse leave `parsed` undefined, which the object test right after refuses with the same error',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof parsed !== 'object'",
        reason: 'a parsed number, string or boolean has no `format` field: the format test refuses it with the same error',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof r.keyVersion !== 'number'",
        reason: 'Number.isInteger, tested next, is false for every non-number',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ArrayDeclaration',
        replacement: '["Stryker was here"]',
        code: '[]',
        near: "versioned ? ['readFrom', 'older'] : []",
        reason: 'it only admits a field named exactly "Stryker was here" on a single-version record',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof readFrom !== 'number'",
        reason: 'Number.isInteger, tested next, is false for every non-number',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'LogicalOperator',
        replacement: "typeof readFrom !== 'number' && !Number.isInteger(readFrom)",
        code: "typeof readFrom !== 'number' || !Number.isInteger(readFrom)",
        reason:
          'a non-number is still refused (both halves true); a non-integer readFrom between 1 and keyVersion is itself one of the versions the kept list must then hold, and no kept entry can (each must be an integer): refused with the same error',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof entry !== 'object'",
        reason: 'a number or string entry has no keyVersion (Object.keys of a string names its indexes, refused first): refused with the same error',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof e.keyVersion !== 'number' || !Number.isInteger(e.keyVersion)",
        reason: 'an entry whose keyVersion is no integer never equals the integer the kept-versions rule expects there: refused with the same error',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'LogicalOperator',
        replacement: "typeof e.keyVersion !== 'number' && !Number.isInteger(e.keyVersion)",
        code: "typeof e.keyVersion !== 'number' || !Number.isInteger(e.keyVersion)",
        reason: 'as above: the kept-versions rule refuses it',
      },
      {
        file: 'src/crypto/key-provider.ts',
        mutator: 'ConditionalExpression',
        replacement: 'false',
        code: "typeof e.keyVersion !== 'number'",
        reason: 'Number.isInteger, tested next, is false for every non-number',
      },
      {
        file: 'src/crypto/wrapped-secret.ts',
        mutator: 'BlockStatement',
        replacement: '{}',
        code: '{\n    macKey.fill(0);\n  }',
        reason:
          'not observable through any interface: the derived MAC key is a local no caller ever sees; wiping it only narrows what a memory dump could show (kept as defence in depth)',
      },
      {
        file: 'src/crypto/wrapped-secret.ts',
        mutator: 'CallExpression',
        replacement: ';',
        code: 'macKey.fill(0);',
        reason: 'as above: the derived MAC key never leaves deploymentMacValid',
      },
    ],
  },
  {
    name: 'fence',
    mutate: ['src/store/fence.ts'],
    tests: ['test/store/reap.test.ts', 'test/store/fence*.mutation.test.ts'],
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
