/**
 * `npm run demo`: memvault on the embedded default store (a SQLite file ./.memvault.db, or the
 * directory ./.memvault; encrypted with a key file ./.memvault.key created beside it on first run).
 * Runs the memory tool commands an agent would send, prints what the model would read, then shows
 * what actually lies on disk.
 */
import { readdir } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createVault } from '../src/index.js';
import { listAll } from '../src/store/port.js';
import { defaultStoreUrl } from '../src/store/open.js';
import { parseSqliteUrl } from '../src/store/sqlite/url.js';

const url = defaultStoreUrl();
const vault = await createVault(); // store: the default, `url`
const user = 'demo-user@example.com';
const commands = [
  { command: 'view', path: '/memories' },
  {
    command: 'create',
    path: '/memories/projects/launch.md',
    file_text: '# Launch plan\n- [ ] write the announcement\n- [ ] book the venue\n',
  },
  {
    command: 'str_replace',
    path: '/memories/projects/launch.md',
    old_str: '- [ ] book the venue',
    new_str: '- [x] book the venue (Hall B, March 3)',
  },
  { command: 'insert', path: '/memories/projects/launch.md', insert_line: 3, insert_text: '- [ ] send invitations' },
  { command: 'view', path: '/memories/projects/launch.md' },
  { command: 'view', path: '/memories/../etc/passwd' },
  { command: 'view', path: '/memories' },
];
for (const input of commands) {
  const result = await vault.run(user, input);
  console.log(`\n> ${JSON.stringify(input)}`);
  console.log(
    `${result.isError ? '[is_error] ' : ''}${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}`,
  );
}
await vault.close();

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full)));
    else out.push(full);
  }
  return out;
}
console.log('\nOn disk (names and contents encrypted; the user id is a keyed hash):');
if (url.startsWith('sqlite:')) {
  // One database file: its objects' keys, as the store lists them.
  const { SqliteStore } = await import('../src/store/sqlite.js');
  const path = parseSqliteUrl(url).path;
  const store = await SqliteStore.open(path, { create: false });
  let shown = 0;
  for await (const object of listAll(store, '')) {
    if (shown++ === 8) break;
    console.log(`  ${basename(path)}: ${object.key} (${object.size} bytes)`);
  }
  await store.close();
} else {
  const root = fileURLToPath(url);
  for (const file of (await walk(root)).slice(0, 8)) console.log(`  ${basename(root)}/${relative(root, file)}`);
}
