/** The memory page's screens, as HTML fragments (html.ts escapes every value they show). */
import { csrfField, html, verbatim, type Safe } from './html.js';

export interface TreeEntry {
  path: string;
  size: number;
  modified: Date;
  /** Who made the file's latest version (from file history), when history is on. */
  actor?: string;
}

const ACTOR_LABELS: Readonly<Record<string, string>> = {
  model: 'agent',
  person: 'you',
  host: 'operator',
  restore: 'restore',
  sweeper: 'expiry',
};

/** Who made a version, in the person's words (a version record's actor). */
export function actorLabel(actor: string): string {
  return ACTOR_LABELS[actor] ?? actor;
}

function fileLink(base: string, path: string): string {
  return `${base}/file?path=${encodeURIComponent(path)}`;
}

export function signedOutScreen(base: string): Safe {
  return html`<p>Sign in to see, correct, restore and erase what agents remember about you.</p>
    <p><a href="${base}/login">Sign in</a></p>`;
}

export function treeScreen(base: string, entries: readonly TreeEntry[], truncated: boolean): Safe {
  if (entries.length === 0) return html`<p>Nothing is remembered about you.</p>`;
  const rows = entries.map(
    (e) =>
      html`<tr>
        <td><a href="${fileLink(base, e.path)}">${e.path}</a></td>
        <td>${e.size.toLocaleString('en-US')} B</td>
        <td><time datetime="${e.modified.toISOString()}">${e.modified.toISOString()}</time></td>
        <td>${e.actor === undefined ? '—' : actorLabel(e.actor)}</td>
      </tr>`,
  );
  return html`<table>
      <caption class="muted">
        Your memory files
      </caption>
      <thead>
        <tr>
          <th scope="col">File</th>
          <th scope="col">Size</th>
          <th scope="col">Last change</th>
          <th scope="col">Changed by</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
    ${truncated ? html`<p class="warn">Only the first files are shown.</p>` : undefined}`;
}

/** Pause memory (agents' writes refused, reads go on) or resume it. */
export function pauseForm(base: string, csrf: string, paused: boolean): Safe {
  return html`<form method="post" action="${base}/pause" id="pause">
    ${csrfField(csrf)}
    <input type="hidden" name="paused" value="${paused ? 'off' : 'on'}" />
    <p>
      ${
        paused
          ? html`<strong>Memory is paused:</strong> agents can read what they remember about you but cannot change it.`
          : html`Memory is on: agents remember and change things about you.`
      }
      <button type="submit">${paused ? 'Resume memory' : 'Pause memory'}</button>
    </p>
  </form>`;
}

/** Restore the whole memory as of a moment (a preview comes first). */
export function restoreAllForm(base: string, csrf: string): Safe {
  return html`<form method="post" action="${base}/restore">
    ${csrfField(csrf)}
    <input type="hidden" name="preview" value="1" />
    <label for="as_of">Restore everything as it was at (UTC, e.g. 2026-12-01T09:00:00Z)</label>
    <input id="as_of" name="as_of" required />
    <button type="submit">Preview</button>
  </form>`;
}

export function fileScreen(base: string, path: string, content: string, etag: string, csrf: string): Safe {
  return html`<p class="muted">${path} · <a href="${base}/versions?path=${encodeURIComponent(path)}">Versions</a></p>
    <form method="post" action="${base}/file">
      ${csrfField(csrf)}
      <input type="hidden" name="path" value="${path}" />
      <input type="hidden" name="base" value="${etag}" />
      <label for="text">Content</label>
      ${verbatim('textarea', 'text', content, 'text')}
      <p><button type="submit">Save</button></p>
    </form>
    <form method="post" action="${base}/delete">
      ${csrfField(csrf)}
      <input type="hidden" name="path" value="${path}" />
      <input type="hidden" name="base" value="${etag}" />
      <button type="submit">Delete this file</button>
    </form>`;
}

export function conflictScreen(
  base: string,
  path: string,
  yours: string,
  theirs: string,
  etag: string,
  csrf: string,
): Safe {
  return html`<p class="warn" role="alert">
      This file changed since you opened it (an agent or another session wrote to it). Nothing was overwritten.
    </p>
    <div class="both">
      <section>
        <h2>Stored now</h2>
        ${verbatim('pre', 'theirs', theirs)}
      </section>
      <section>
        <h2>Your edit (not saved)</h2>
        ${verbatim('pre', 'yours', yours)}
      </section>
    </div>
    <h2>Save your edit over the stored text</h2>
    <form method="post" action="${base}/file">
      ${csrfField(csrf)}
      <input type="hidden" name="path" value="${path}" />
      <input type="hidden" name="base" value="${etag}" />
      <label for="text">Content</label>
      ${verbatim('textarea', 'text', yours, 'text')}
      <p><button type="submit">Save</button> <a href="${fileLink(base, path)}">Discard my edit</a></p>
    </form>`;
}

export function messageScreen(message: string, base: string): Safe {
  return html`<p role="status">${message}</p>
    <p><a href="${base}">Back to your memory</a></p>`;
}
