/**
 * What a signed-in person does on the memory page: browse, read, edit (conditional on the version
 * the edit was based on), delete, download everything, forget me. Edits and deletes are tool
 * commands through vault.run, so the path guard, PII redactor, quotas and audit apply as to an agent.
 */
import type { FastifyInstance } from 'fastify';
import { isMemvaultError } from '../../errors.js';
import type { Vault } from '../../memvault.js';
import { etagOf, memoryPathOf } from '../file-routes.js';
import { ProblemError } from '../problems.js';
import { html } from './html.js';
import {
  conflictScreen,
  fileScreen,
  messageScreen,
  pauseForm,
  restoreAllForm,
  treeScreen,
  type TreeEntry,
} from './screens.js';
import type { PageContext } from './context.js';
import { versionRoutes } from './versions.js';
import { formOf } from './form.js';

/** Files the tree shows at most. */
export const MAX_TREE_FILES = 5_000;
/** What the person types to confirm erasure. */
export const FORGET_CONFIRMATION = 'forget me';
/** Erasure needs a sign-in this recent (ms), as the API's erasure needs a fresh token. */
export const FRESH_SIGN_IN_MS = 10 * 60_000;

const decoder = new TextDecoder('utf-8', { fatal: false });

/** The hex SHA-256 of an ETag the page gave (`"sha256:<hex>"`), or a 400. */
function hexOf(etag: string): string {
  const match = /^"sha256:([0-9a-f]{64})"$/.exec(etag);
  if (!match) throw new ProblemError('invalid-request', 'The version the edit was based on is not valid.');
  return match[1]!;
}

/**
 * Browsers send a textarea's line ends as CRLF whatever the file held: the edit gets the file's own
 * style, CRLF only when every line end of the stored file is one (a new file gets LF).
 */
export function withLineEndsOf(stored: string | undefined, submitted: string): string {
  const lf = submitted.replace(/\r\n/g, '\n');
  const crlf = stored !== undefined && stored.includes('\r\n') && !/(^|[^\r])\n/.test(stored);
  return crlf ? lf.replace(/\n/g, '\r\n') : lf;
}

function resultText(content: unknown): string {
  return typeof content === 'string' ? content : 'The change was refused.';
}

export function pageActions(scope: FastifyInstance, vault: Vault, page: PageContext): void {
  const { prefix, send } = page;
  versionRoutes(scope, vault, page);

  function pathOf(value: unknown): string {
    if (typeof value !== 'string') throw new ProblemError('invalid-request', 'Name a file.');
    return memoryPathOf(value.replace(/^\//, ''));
  }

  async function tree(user: string): Promise<{ entries: TreeEntry[]; truncated: boolean }> {
    const files = await vault.files(user);
    const entries: TreeEntry[] = [];
    let truncated = false;
    for await (const file of files.listFiles('/memories')) {
      if (entries.length === MAX_TREE_FILES) {
        truncated = true;
        break;
      }
      entries.push({ path: file.path, size: file.size, modified: file.lastModified });
    }
    try {
      const { versions } = await vault.history(user, '/memories', { actor: page.actor });
      const latest = new Map<string, { seq: number; actor: string }>();
      for (const v of versions) {
        const seen = latest.get(v.path);
        if (!seen || v.seq > seen.seq) latest.set(v.path, { seq: v.seq, actor: v.actor });
      }
      for (const entry of entries) entry.actor = latest.get(entry.path)?.actor;
    } catch (error) {
      // Without file history there is no "changed by" column to fill.
      if (!isMemvaultError(error, 'CONFIG')) throw error;
    }
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { entries, truncated };
  }

  scope.get('/', async (request, reply) => {
    const session = await page.readSession(request, reply);
    if (!session) return page.signedOut(reply);
    const { entries, truncated } = await tree(session.user);
    const paused = await vault.memoryPaused(session.user);
    const body = html`${pauseForm(prefix, session.csrf, paused)} ${treeScreen(prefix, entries, truncated)}
    ${restoreAllForm(prefix, session.csrf)}`;
    return send(reply, 200, 'Your memory', body, session);
  });

  scope.get<{ Querystring: { path?: string } }>('/file', async (request, reply) => {
    const session = await page.readSession(request, reply);
    if (!session) return reply.redirect(prefix, 303);
    const path = pathOf(request.query.path);
    const file = await (await vault.files(session.user)).read(path);
    if (!file) throw new ProblemError('not-found', 'There is no such file in your memory.');
    const body = fileScreen(prefix, path, decoder.decode(file.data), etagOf(file.data), session.csrf);
    return send(reply, 200, 'A memory file', body, session);
  });

  scope.post('/file', async (request, reply) => {
    const form = formOf(request);
    const session = await page.writeSession(request, reply, form);
    const path = pathOf(form['path']);
    if (typeof form['text'] !== 'string' || typeof form['base'] !== 'string')
      throw new ProblemError('invalid-request', 'Send the text and the version it was based on.');
    const files = await vault.files(session.user);
    const current = await files.read(path);
    const text = withLineEndsOf(current ? decoder.decode(current.data) : undefined, form['text']);
    const conflict = async (stored: Uint8Array | undefined) =>
      send(
        reply,
        409,
        'Changed meanwhile',
        conflictScreen(
          prefix,
          path,
          text,
          stored ? decoder.decode(stored) : '',
          stored ? etagOf(stored) : '',
          session.csrf,
        ),
        session,
      );
    // An empty base: the file was gone when the edit started (a conflict screen after a delete).
    const created = form['base'] === '';
    if (created ? current : !current || etagOf(current.data) !== form['base']) return conflict(current?.data);
    if (current && decoder.decode(current.data) === text)
      return send(reply, 200, 'Saved', messageScreen('Nothing changed.', prefix), session);
    // The write lands only on exactly the version the edit was based on: an agent's write since
    // then is a conflict, and nothing is overwritten.
    const result = await vault.run(
      session.user,
      { command: 'create', path, file_text: text },
      {
        precondition: created ? { ifNoneMatch: '*' } : { ifMatch: hexOf(form['base']) },
        actor: page.actor,
        writer: 'person',
      },
    );
    if (result.code === 'VERSION_MISMATCH') return conflict((await files.read(path))?.data);
    if (result.isError)
      return send(reply, 422, 'Not saved', messageScreen(resultText(result.content), prefix), session);
    return send(reply, 200, 'Saved', messageScreen(`Saved ${path}.`, prefix), session);
  });

  scope.post('/delete', async (request, reply) => {
    const form = formOf(request);
    const session = await page.writeSession(request, reply, form);
    const path = pathOf(form['path']);
    if (typeof form['base'] !== 'string') throw new ProblemError('invalid-request', 'Send the version to delete.');
    const result = await vault.run(
      session.user,
      { command: 'delete', path },
      { precondition: { ifMatch: hexOf(form['base']) }, actor: page.actor, writer: 'person' },
    );
    if (result.code === 'VERSION_MISMATCH')
      return send(
        reply,
        409,
        'Changed meanwhile',
        messageScreen('This file changed since you opened it; nothing was deleted. Open it again.', prefix),
        session,
      );
    const status = result.isError ? 422 : 200;
    const message = result.isError ? resultText(result.content) : `Deleted ${path}.`;
    return send(reply, status, result.isError ? 'Not deleted' : 'Deleted', messageScreen(message, prefix), session);
  });

  scope.post('/pause', async (request, reply) => {
    const form = formOf(request);
    const session = await page.writeSession(request, reply, form);
    if (form['paused'] !== 'on' && form['paused'] !== 'off')
      throw new ProblemError('invalid-request', 'Choose to pause or to resume.');
    const paused = form['paused'] === 'on';
    await vault.setMemoryPaused(session.user, paused, { actor: page.actor });
    const message = paused
      ? 'Memory is paused: agents can read what they remember about you, but not change it.'
      : 'Memory is on again: agents can remember and change things.';
    return send(reply, 200, paused ? 'Paused' : 'Resumed', messageScreen(message, prefix), session);
  });

  scope.get('/export', async (request, reply) => {
    const session = await page.readSession(request, reply);
    if (!session) return reply.redirect(prefix, 303);
    let archive;
    try {
      archive = await vault.exportUser(session.user, { actor: page.actor });
    } catch (error) {
      if (isMemvaultError(error, 'NOT_FOUND'))
        return send(reply, 404, 'Nothing to download', messageScreen('Nothing is stored for you.', prefix), session);
      throw error;
    }
    archive.done.catch(() => undefined);
    return reply
      .headers({
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-disposition': 'attachment; filename="memvault-export.tar"',
      })
      .type('application/x-tar')
      .send(archive.stream);
  });

  scope.get('/forget', async (request, reply) => {
    const session = await page.readSession(request, reply);
    if (!session) return reply.redirect(prefix, 303);
    const body = html`<p class="warn">
        This erases everything agents remember about you, and every earlier version. It cannot be undone.
      </p>
      <form method="post" action="${prefix}/forget">
        <input type="hidden" name="csrf" value="${session.csrf}" />
        <label for="confirm">Type <strong>${FORGET_CONFIRMATION}</strong> to confirm</label>
        <input id="confirm" name="confirm" autocomplete="off" required />
        <p><button type="submit">Erase my memory</button></p>
      </form>`;
    return send(reply, 200, 'Forget me', body, session);
  });

  scope.post('/forget', async (request, reply) => {
    const form = formOf(request);
    const session = await page.writeSession(request, reply, form);
    if (page.now() - session.created > FRESH_SIGN_IN_MS) {
      await page.endSession(reply, session, false);
      return send(reply, 403, 'Sign in again', messageScreen('To erase your memory, sign in again first.', prefix));
    }
    if (form['confirm']?.trim().toLowerCase() !== FORGET_CONFIRMATION)
      return send(
        reply,
        400,
        'Not erased',
        messageScreen(`Type “${FORGET_CONFIRMATION}” to confirm.`, prefix),
        session,
      );
    const result = await vault.forgetUser(session.user, { actor: page.actor });
    const at = new Date().toISOString();
    await page.endSession(reply, session, false);
    const body = html`<p role="status">Your memory is erased and you are signed out. Keep this receipt.</p>
      <dl id="receipt">
        <dt>Erased at</dt>
        <dd>${at}</dd>
        <dt>Encryption key destroyed</dt>
        <dd>${result.keyDeleted ? 'yes' : 'no key was left (already erased)'}</dd>
        <dt>Objects deleted</dt>
        <dd>${result.objectsDeleted}</dd>
        <dt>Pseudonymous user id in the audit log</dt>
        <dd>${result.uid}</dd>
      </dl>`;
    return send(reply, 200, 'Erased', body);
  });
}
