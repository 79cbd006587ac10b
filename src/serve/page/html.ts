/**
 * HTML for the memory page, written on the server: every value goes through `text()` (escaped for
 * element content and quoted attributes), so a memory holding markup, script or links is shown as
 * the characters it is. Templates are tagged with `html`, which escapes each interpolated value
 * unless it is already a `Safe` fragment made here.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export class Safe {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function text(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = string | number | Safe | readonly Safe[] | undefined | null | false;

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof Safe) return part.value;
  if (Array.isArray(part)) return part.map((p: Safe) => p.value).join('');
  return text(part);
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Safe {
  let out = strings[0]!;
  parts.forEach((part, i) => {
    out += render(part) + strings[i + 1]!;
  });
  return new Safe(out);
}

/** The security headers of every page: no script at all, nothing from another origin, no framing, no caching. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Not no-referrer: under it Chromium sends `Origin: null` with the page's own forms.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export function layout(title: string, body: Safe, base: string, signedIn: { csrf: string } | undefined): string {
  const logout = signedIn
    ? html`<form method="post" action="${base}/logout" class="inline">
        <input type="hidden" name="csrf" value="${signedIn.csrf}" />
        <button type="submit">Log out</button>
      </form>`
    : undefined;
  const nav = signedIn
    ? html`<nav aria-label="Main">
        <a href="${base}">Memory</a>
        <a href="${base}/export">Download everything</a>
        <a href="${base}/forget">Forget me</a>
        ${logout}
      </nav>`
    : undefined;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · memvault</title>
        <link rel="stylesheet" href="${base}/page.css" />
      </head>
      <body>
        <header><strong>memvault</strong> ${nav}</header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `.value;
}

/** A hidden CSRF field for a form. */
export function csrfField(csrf: string): Safe {
  return html`<input type="hidden" name="csrf" value="${csrf}" />`;
}

/**
 * A textarea or pre holding a file's text exactly: the newline after the opening tag is the one the
 * HTML parser drops, so a text that starts with a newline keeps it.
 */
export function verbatim(tag: 'textarea' | 'pre', id: string, content: string, name?: string): Safe {
  const nameAttr = name === undefined ? '' : ` name="${text(name)}" spellcheck="false"`;
  return new Safe(`<${tag} id="${text(id)}"${nameAttr}>\n${text(content)}</${tag}>`);
}
