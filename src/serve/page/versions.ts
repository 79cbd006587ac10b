/**
 * A file's versions (who made each and when) and restore: a file, a folder or the whole memory as of
 * a time, shown first as a preview of what would change (a dry run), applied only on confirmation.
 * Both are the vault's audited lifecycle operations with the page's actor.
 */
import type { FastifyInstance } from 'fastify';
import { isMemvaultError } from '../../errors.js';
import type { Vault } from '../../memvault.js';
import type { VersionInfo } from '../../vault/history.js';
import { parseRfc3339 } from '../../util/date-time.js';
import { memoryPathOf } from '../file-routes.js';
import { ProblemError } from '../problems.js';
import type { PageContext } from './context.js';
import { formOf } from './form.js';
import { csrfField, html, Safe } from './html.js';
import { diffRoutes } from './diff-screen.js';
import { actorLabel, messageScreen } from './screens.js';

/** Versions one screen lists at most (newest first). */
export const MAX_SHOWN_VERSIONS = 500;

function historyOff(error: unknown): never {
  if (isMemvaultError(error, 'CONFIG'))
    throw new ProblemError('invalid-request', 'This service keeps no earlier versions (file history is off).');
  throw error;
}

function restoreForm(prefix: string, csrf: string, path: string, asOf: string, label: string, preview: boolean): Safe {
  return html`<form method="post" action="${prefix}/restore" class="inline">
    ${csrfField(csrf)}
    <input type="hidden" name="path" value="${path}" />
    <input type="hidden" name="as_of" value="${asOf}" />
    ${preview ? html`<input type="hidden" name="preview" value="1" />` : undefined}
    <button type="submit">${label}</button>
  </form>`;
}

/** Pick two versions to see the lines that changed between them (GET <prefix>/diff). */
function compareForm(prefix: string, path: string, versions: readonly VersionInfo[]): Safe {
  const options = (selected: number) =>
    versions.map(
      (v) =>
        html`<option value="${v.seq}" ${v.seq === selected ? new Safe('selected') : undefined}>
          ${v.seq} · ${v.time.toISOString()} · ${actorLabel(v.actor)}
        </option>`,
    );
  return html`<h2>Compare two versions</h2>
    <form method="get" action="${prefix}/diff">
      <input type="hidden" name="path" value="${path}" />
      <label for="from">From (older)</label>
      <select id="from" name="from">
        ${options(versions[1]!.seq)}
      </select>
      <label for="to">To (newer)</label>
      <select id="to" name="to">
        ${options(versions[0]!.seq)}
      </select>
      <button type="submit">Compare</button>
    </form>`;
}

export function versionRoutes(scope: FastifyInstance, vault: Vault, page: PageContext): void {
  const { prefix, send } = page;
  diffRoutes(scope, vault, page);

  scope.get<{ Querystring: { path?: string } }>('/versions', async (request, reply) => {
    const session = await page.readSession(request, reply);
    if (!session) return reply.redirect(prefix, 303);
    if (typeof request.query.path !== 'string') throw new ProblemError('invalid-request', 'Name a file.');
    const path = memoryPathOf(request.query.path.replace(/^\//, ''));
    const listed = await vault.history(session.user, path, { actor: page.actor }).catch(historyOff);
    const versions = listed.versions
      .filter((v) => v.path === path)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, MAX_SHOWN_VERSIONS);
    if (versions.length === 0)
      return send(reply, 200, 'Versions', messageScreen('No earlier versions are kept of this file.', prefix), session);
    // A version was current from when it was stored until the next one was made: restore as of the
    // moment before the next version's writer started (the newest: now).
    const until = (i: number) => (i === 0 ? new Date() : new Date(versions[i - 1]!.time.getTime() - 1));
    const rows = versions.map(
      (v, i) =>
        html`<tr>
          <td>${v.seq}</td>
          <td><time datetime="${v.time.toISOString()}">${v.time.toISOString()}</time></td>
          <td>${actorLabel(v.actor)}</td>
          <td>${v.end ? `(${v.end})` : `${v.size.toLocaleString('en-US')} B`}</td>
          <td>${restoreForm(prefix, session.csrf, path, until(i).toISOString(), 'Restore…', true)}</td>
        </tr>`,
    );
    const body = html`<p class="muted">${path}</p>
      <table>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Made at</th>
            <th scope="col">By</th>
            <th scope="col">Size</th>
            <th scope="col"><span class="muted">Restore</span></th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
      ${versions.length > 1 ? compareForm(prefix, path, versions) : undefined}`;
    return send(reply, 200, 'Versions', body, session);
  });

  scope.post('/restore', async (request, reply) => {
    const form = formOf(request);
    const session = await page.writeSession(request, reply, form);
    // Strictly RFC 3339 with a timezone (as the versions screen writes it): a date nobody meant is
    // refused, never guessed (new Date() would take "1" or "March 7").
    const asOf = parseRfc3339(form['as_of']);
    if (asOf === undefined)
      throw new ProblemError(
        'invalid-request',
        'Give the date and time to restore to as 2026-03-07T12:00:00Z (with its timezone); nothing was changed.',
      );
    const raw = form['path'] ?? '';
    const path = raw === '' ? undefined : memoryPathOf(raw.replace(/^\//, ''));
    // Absent (the confirmation form) or 1 (the preview); any other value is no default for a restore.
    if (form['preview'] !== undefined && form['preview'] !== '1')
      throw new ProblemError('invalid-request', 'The form is not one this page sent; nothing was changed.');
    const preview = form['preview'] === '1';
    const result = await vault
      .restore(session.user, { asOf, dryRun: preview, actor: page.actor, ...(path ? { path } : {}) })
      .catch(historyOff);
    const changes = result.files.filter((f) => f.action !== 'unchanged');
    const items = changes.map((f) => html`<li>${f.path}: ${f.action}</li>`);
    const what = path ?? 'your whole memory';
    if (!preview) {
      const body = html`<p role="status">
          Restored ${what} as of ${asOf.toISOString()}: ${result.restored} restored, ${result.deleted} deleted,
          ${result.conflicts} changed meanwhile and left as they are.
        </p>
        <ul>
          ${items}
        </ul>
        <p><a href="${prefix}">Back to your memory</a></p>`;
      return send(reply, 200, 'Restored', body, session);
    }
    const body = html`<p role="status">
        Restoring ${what} as of ${asOf.toISOString()} would change ${changes.length} file(s):
      </p>
      <ul id="preview">
        ${items}
      </ul>
      ${
        changes.length > 0
          ? restoreForm(prefix, session.csrf, path ?? '', asOf.toISOString(), 'Restore now', false)
          : undefined
      }
      <p><a href="${prefix}">Back to your memory</a></p>`;
    return send(reply, 200, 'Restore preview', body, session);
  });
}
