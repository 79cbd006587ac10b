/**
 * The diff of two kept versions of a file (GET <prefix>/diff?path=&from=&to=): both read with
 * vault.readVersion as the page's actor, compared line by line (./diff.ts) and shown as text with a
 * visible "+" or "-" before each changed line (colour only repeats it). Long unchanged runs fold.
 */
import type { FastifyInstance } from 'fastify';
import { isMemvaultError } from '../../errors.js';
import type { VersionContent } from '../../lifecycle/read-version.js';
import type { Vault } from '../../memvault.js';
import { memoryPathOf } from '../file-routes.js';
import { ProblemError } from '../problems.js';
import type { PageContext } from './context.js';
import { diffLines, MAX_DIFF_LINES, type DiffLine } from './diff.js';
import { html, Safe, text } from './html.js';
import { actorLabel } from './screens.js';

/** Unchanged lines shown on each side of a change; a longer unchanged run folds to one line. */
const CONTEXT_LINES = 3;
const decoder = new TextDecoder('utf-8', { fatal: false });

function seqOf(value: unknown): number {
  const seq = typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(seq)) throw new ProblemError('invalid-request', 'Pick two versions to compare.');
  return seq;
}

const MARKS = { same: '  ', removed: '- ', added: '+ ' } as const;

/** The diff as one pre: each line a span, del or ins element starting with its marker. */
export function renderDiff(lines: readonly DiffLine[]): Safe {
  const out: string[] = [];
  const changed = lines.map((l) => l.kind !== 'same');
  const near = (i: number) => {
    for (let j = Math.max(0, i - CONTEXT_LINES); j <= Math.min(lines.length - 1, i + CONTEXT_LINES); j++)
      if (changed[j]) return true;
    return false;
  };
  let folded = 0;
  const flush = () => {
    if (folded > 0) out.push(`<span class="muted">  … ${folded} unchanged line${folded === 1 ? '' : 's'}</span>\n`);
    folded = 0;
  };
  lines.forEach((line, i) => {
    if (line.kind === 'same' && !near(i)) {
      folded += 1;
      return;
    }
    flush();
    const tag = line.kind === 'removed' ? 'del' : line.kind === 'added' ? 'ins' : 'span';
    out.push(`<${tag}>${MARKS[line.kind]}${text(line.text)}</${tag}>\n`);
  });
  flush();
  return new Safe(`<pre id="diff" class="diff">\n${out.join('')}</pre>`);
}

/** One line: the version's number, time and writer (a plain string; html escapes it where it is used). */
function describe(version: VersionContent): string {
  const end = version.end ? `, ${version.end}` : '';
  return `version ${version.seq} (${version.time.toISOString()}, by ${actorLabel(version.actor)}${end})`;
}

export function diffRoutes(scope: FastifyInstance, vault: Vault, page: PageContext): void {
  const { prefix, send } = page;

  scope.get<{ Querystring: { path?: string; from?: string; to?: string } }>('/diff', async (request, reply) => {
    const session = await page.readSession(request, reply);
    if (!session) return reply.redirect(prefix, 303);
    if (typeof request.query.path !== 'string') throw new ProblemError('invalid-request', 'Name a file.');
    const path = memoryPathOf(request.query.path.replace(/^\//, ''));
    const [from, to] = [seqOf(request.query.from), seqOf(request.query.to)];
    const read = (seq: number) =>
      vault.readVersion(session.user, path, seq, { actor: page.actor }).catch((error: unknown) => {
        if (isMemvaultError(error, 'CONFIG') || isMemvaultError(error, 'NOT_FOUND')) return null;
        throw error;
      });
    const [before, after] = [await read(from), await read(to)];
    if (!before || !after)
      throw new ProblemError('not-found', 'One of these versions is not kept (any more); pick two from the list.');
    const result = diffLines(decoder.decode(before.data), decoder.decode(after.data));
    const back = html`<p><a href="${prefix}/versions?path=${encodeURIComponent(path)}">Back to the versions</a></p>`;
    if ('tooLong' in result) {
      const body = html`<p role="status">
          These versions are too long to compare here (over ${MAX_DIFF_LINES.toLocaleString('en-US')} lines). The
          download (Download everything) holds every version whole.
        </p>
        ${back}`;
      return send(reply, 200, 'Compare versions', body, session);
    }
    const removed = result.lines.filter((l) => l.kind === 'removed').length;
    const added = result.lines.filter((l) => l.kind === 'added').length;
    const body = html`<p class="muted">${path}</p>
      <p role="status">
        From ${describe(before)} to ${describe(after)}: ${removed} line(s) removed (marked -), ${added} added (marked
        +).${result.shortest ? '' : ' The versions differ too much to find the shortest comparison; this one is longer.'}
      </p>
      ${removed + added === 0 ? html`<p>The two versions hold the same text.</p>` : renderDiff(result.lines)} ${back}`;
    return send(reply, 200, 'Compare versions', body, session);
  });
}
