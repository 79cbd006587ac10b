/** The page's one stylesheet, served from the same origin (the CSP allows nothing else). */
export const PAGE_CSS = `
:root { color-scheme: light dark; --fg: #111; --bg: #fff; --muted: #555; --accent: #0b57d0; --warn: #a30000; }
@media (prefers-color-scheme: dark) { :root { --fg: #eee; --bg: #121212; --muted: #bbb; --accent: #8ab4f8; --warn: #ff8a80; } }
body { font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .75rem 1rem; border-bottom: 1px solid var(--muted); }
nav { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
a { color: var(--accent); }
a:focus, button:focus, textarea:focus, input:focus { outline: 3px solid var(--accent); outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--muted); vertical-align: top; }
pre, textarea { font: 14px/1.4 ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
pre { border: 1px solid var(--muted); padding: .75rem; overflow-x: auto; }
textarea { width: 100%; min-height: 16rem; box-sizing: border-box; color: var(--fg); background: var(--bg); }
button { font: inherit; padding: .35rem .9rem; cursor: pointer; }
.inline { display: inline; }
.warn { color: var(--warn); font-weight: 600; }
.muted { color: var(--muted); }
.both { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1rem; }
del { background: #ffd7d5; color: #111; text-decoration: none; }
ins { background: #ccffd8; color: #111; text-decoration: none; }
`;
