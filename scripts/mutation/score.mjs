/**
 * Scores per mutation target, read from the target's incremental file (a full mutation-testing
 * report), with the target's listed equivalent mutants counted apart.
 */
import { createHash } from 'node:crypto';
import { existsSync, globSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { withoutHostPaths } from './host-paths.mjs';
import { incrementalFileOf } from './targets.mjs';

export { hostPathsIn } from './host-paths.mjs';

export function readReport(target) {
  const file = incrementalFileOf(target.name);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Rewrite a target's committed report without host paths (after every Stryker run). */
export function stripHostPaths(target) {
  const report = readReport(target);
  if (!report) return false;
  writeReport(target, withoutHostPaths(report));
  return true;
}

function writeReport(target, report) {
  writeFileSync(incrementalFileOf(target.name), JSON.stringify(report, null, 2));
}

/**
 * Drops the mutants a report records as survived or without coverage, so that the next incremental
 * run tests them again (Stryker would reuse those results while their old covering tests are
 * unchanged); every other result is kept. Returns how many were dropped.
 */
export function dropSurvivors(target) {
  const report = readReport(target);
  if (!report) return 0;
  let dropped = 0;
  for (const file of Object.values(report.files)) {
    const kept = file.mutants.filter((m) => m.status !== 'Survived' && m.status !== 'NoCoverage');
    dropped += file.mutants.length - kept.length;
    file.mutants = kept;
  }
  writeReport(target, report);
  return dropped;
}

/** The original text a mutant replaces, and the whole source lines it spans. */
function originalOf(source, location) {
  const lines = source.split('\n');
  const { start, end } = location;
  const span =
    start.line === end.line
      ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
      : [
          lines[start.line - 1].slice(start.column - 1),
          ...lines.slice(start.line, end.line - 1),
          lines[end.line - 1].slice(0, end.column - 1),
        ].join('\n');
  return { span, line: lines.slice(start.line - 1, end.line).join('\n') };
}

/**
 * Code with its layout taken out: runs of whitespace as one space, none just inside a bracket, no
 * trailing comma. Prettier (a new print width) breaks a listed `code` or `near` across lines, or
 * joins it, without changing what it is.
 */
const squash = (code) =>
  code
    .replace(/\s+/g, ' ')
    .replace(/,\s*([)\]}])/g, '$1')
    .replace(/([([{])\s/g, '$1')
    .replace(/\s([)\]}])/g, '$1');

/**
 * An equivalent mutant is named by what it changes, not by where: the file, the mutator, the
 * replacement, the original code it replaces (`code`), and a piece of its source line (`near`) when
 * that code occurs more than once. Line numbers move with every edit above (a Prettier run moved
 * all of them); the code does not, and it is compared without its layout (squash).
 */
export function listedEquivalentOf(target, file, mutant, source) {
  return target.equivalent.find((e) => {
    if (e.file !== file || e.mutator !== mutant.mutatorName || e.replacement !== mutant.replacement) return false;
    const original = originalOf(source, mutant.location);
    return (
      squash(original.span) === squash(e.code) &&
      (e.near === undefined || squash(original.line).includes(squash(e.near)))
    );
  });
}

/** Counts as Stryker defines them; the score is detected / (detected + undetected), in percent. */
export function scoreOf(target, report) {
  const counts = {
    mutants: 0,
    killed: 0,
    survived: 0,
    timeout: 0,
    noCoverage: 0,
    equivalent: 0,
    errors: 0,
    ignored: 0,
  };
  const survivors = [];
  const used = new Set();
  for (const [file, entry] of Object.entries(report.files)) {
    for (const mutant of entry.mutants) {
      counts.mutants += 1;
      const undetected = mutant.status === 'Survived' || mutant.status === 'NoCoverage';
      const equivalent = undetected ? listedEquivalentOf(target, file, mutant, entry.source) : undefined;
      if (equivalent) {
        counts.equivalent += 1;
        used.add(equivalent);
      } else if (mutant.status === 'Killed') counts.killed += 1;
      else if (mutant.status === 'Timeout') counts.timeout += 1;
      else if (mutant.status === 'Survived') counts.survived += 1;
      else if (mutant.status === 'NoCoverage') counts.noCoverage += 1;
      else if (mutant.status === 'Ignored') counts.ignored += 1;
      else counts.errors += 1; // CompileError, RuntimeError: invalid mutants, not counted
      if (undetected && !equivalent) {
        survivors.push(
          `${file}:${mutant.location.start.line}:${mutant.location.start.column} ${mutant.mutatorName} ${JSON.stringify(mutant.replacement ?? '')} (${mutant.status})`,
        );
      }
    }
  }
  const detected = counts.killed + counts.timeout;
  const valid = detected + counts.survived + counts.noCoverage;
  const score = valid === 0 ? 0 : (100 * detected) / valid;
  // A listed equivalent that matches no surviving mutant is out of date (the code changed, or a test kills it now).
  const unusedEquivalents = target.equivalent
    .filter((e) => !used.has(e))
    .map((e) => `${e.file} ${e.mutator} ${JSON.stringify(e.code)} -> ${e.replacement}`);
  return { ...counts, score, survivors, unusedEquivalents };
}

const sha = (text) => createHash('sha256').update(text).digest('hex');

/**
 * TypeScript's compiler (a devDependency), loaded on first use: a copy of these scripts outside the
 * repository (test/lint/mutation-gate.test.ts) has none, and there two sources are the same only
 * when their text is.
 */
let typescript;
function loadTypescript() {
  if (typescript === undefined) {
    try {
      typescript = createRequire(import.meta.url)('typescript');
    } catch {
      typescript = null;
    }
  }
  return typescript;
}

/**
 * A fingerprint of a source file that a reformat does not change and any change to the code does:
 * the sha-256 of its syntax tree (each node's kind, entered and left), its tokens (kind and text;
 * a string literal by its value, so that a change of quotes is not a change), and its comments
 * that are directives (with their runs of whitespace made one space). Whitespace between tokens is
 * not in it, nor a trailing comma before a closing bracket (Prettier adds one when it breaks a list
 * across lines, and removes it when the list fits on one). A comment counts only when it is a
 * directive: a `// Stryker disable` changes which mutants run, a `@ts-expect-error` what compiles,
 * a `/// <reference>` what is loaded; prose changes no mutant's result. The tree is kept so that two
 * texts with the same tokens that parse differently (a line break after `return`) differ.
 * Undefined when TypeScript cannot be loaded (the caller then compares the texts).
 */
/** Comments that change what runs or compiles: Stryker's, TypeScript's and triple-slash directives. */
const DIRECTIVE = /Stryker|@ts-|^\/\/\/\s*</;

export function sourceFingerprint(file, text) {
  const ts = loadTypescript();
  if (!ts) return undefined;
  const kind = /\.[cm]?jsx?$/.test(file)
    ? ts.ScriptKind.JS
    : file.endsWith('.tsx')
      ? ts.ScriptKind.TSX
      : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const trivia = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard);
  const closers = new Set([
    ts.SyntaxKind.CloseParenToken,
    ts.SyntaxKind.CloseBracketToken,
    ts.SyntaxKind.CloseBraceToken,
    ts.SyntaxKind.GreaterThanToken,
  ]);
  // A type member's `;` or `,` (Prettier puts one after the last member when it breaks the type).
  const separators = new Set([ts.SyntaxKind.SemicolonToken, ts.SyntaxKind.CommaToken]);
  // Parentheses around the whole operand of `return`, `throw` or an arrow's body, which Prettier
  // adds when it breaks the expression: they change nothing there (the tree is kept, so an object
  // literal body still differs from a block).
  const redundantParens = (node) =>
    ts.isParenthesizedExpression(node) &&
    (ts.isReturnStatement(node.parent) ||
      ts.isThrowStatement(node.parent) ||
      (ts.isArrowFunction(node.parent) && node.parent.body === node));
  // A leading `|` or `&` before a union's or intersection's first member (Prettier writes one when it
  // puts each member on its own line).
  const leading = new Set([ts.SyntaxKind.BarToken, ts.SyntaxKind.AmpersandToken]);
  const optionalToken = (node, child, children) =>
    (ts.isTypeElement(node) && child === children.at(-1) && separators.has(child.kind)) ||
    (node.kind === ts.SyntaxKind.SyntaxList &&
      (ts.isUnionTypeNode(node.parent) || ts.isIntersectionTypeNode(node.parent)) &&
      child === children[0] &&
      leading.has(child.kind));
  const entries = [];
  let lastComma = -1; // the index of a comma token with nothing but comments and tree marks after it
  let end = 0; // where the previous token ended: what lies between it and the next one is trivia
  const comments = (from, to) => {
    trivia.setText(text, from, to - from);
    for (let t = trivia.scan(); t !== ts.SyntaxKind.EndOfFileToken; t = trivia.scan()) {
      if (t === ts.SyntaxKind.SingleLineCommentTrivia || t === ts.SyntaxKind.MultiLineCommentTrivia) {
        const comment = trivia.getTokenText();
        if (DIRECTIVE.test(comment)) entries.push(`#${comment.replace(/\s+/g, ' ').trim()}`);
      }
    }
  };
  const token = (node) => {
    const start = node.getStart(source);
    comments(end, start);
    end = node.end;
    if (node.kind === ts.SyntaxKind.EndOfFileToken) return;
    if (closers.has(node.kind) && lastComma >= 0) entries[lastComma] = undefined;
    lastComma = node.kind === ts.SyntaxKind.CommaToken ? entries.length : -1;
    const value = node.kind === ts.SyntaxKind.StringLiteral ? JSON.stringify(node.text) : text.slice(start, node.end);
    entries.push(`${node.kind} ${value}`);
  };
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return; // read as comments
    const children = node.getChildren(source);
    if (children.length === 0) {
      if (node.end > node.getStart(source) || node.kind === ts.SyntaxKind.EndOfFileToken) token(node);
      return;
    }
    if (redundantParens(node)) return visit(node.expression);
    entries.push(`(${node.kind}`);
    for (const child of children) if (!optionalToken(node, child, children)) visit(child);
    entries.push(')');
  };
  visit(source);
  return sha(entries.filter((e) => e !== undefined).join('\n'));
}

/** Whether two versions of a file are the same code: the same text, or the same fingerprint. */
export function sameCode(file, recorded, current) {
  if (recorded === current) return true;
  const before = sourceFingerprint(file, recorded);
  return before !== undefined && before === sourceFingerprint(file, current);
}

/**
 * What the committed report does not cover: a mutated file or a covering test file whose code
 * differs from the source recorded in the report (by sourceFingerprint: a Prettier run changes no
 * code), or that the report lacks. Empty: the report is the result for the current code.
 */
export function staleFiles(target, report) {
  if (!report) return ['(no report)'];
  const stale = [];
  const sources = globSync(target.mutate).sort();
  for (const file of sources) {
    const recorded = report.files[file]?.source;
    if (recorded === undefined || !sameCode(file, recorded, readFileSync(file, 'utf8'))) stale.push(file);
  }
  for (const file of Object.keys(report.files)) if (!sources.includes(file)) stale.push(`${file} (gone)`);
  const tests = globSync(target.tests).sort();
  const recordedTests = report.testFiles ?? {};
  for (const file of tests) {
    const recorded = recordedTests[file]?.source;
    if (recorded === undefined || !sameCode(file, recorded, readFileSync(file, 'utf8'))) stale.push(file);
  }
  return stale;
}

export function formatTable(rows) {
  const header = [
    'module',
    'threshold',
    'score',
    'mutants',
    'killed',
    'survived',
    'timeout',
    'no-cov',
    'equiv',
    'invalid',
  ];
  const lines = rows.map((r) =>
    r.missing
      ? [r.name, `${r.threshold}%`, 'not scored', '', '', '', '', '', '', '']
      : [
          r.name,
          `${r.threshold}%`,
          `${r.score.toFixed(2)}%`,
          r.mutants,
          r.killed,
          r.survived,
          r.timeout,
          r.noCoverage,
          r.equivalent,
          r.errors + r.ignored,
        ].map(String),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const fmt = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
