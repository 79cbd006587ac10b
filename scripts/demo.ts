/**
 * `npm run demo`: memvault on the embedded default store (./.memvault, encrypted with a key file
 * created beside it on first run). Runs the memory tool commands an agent would send, prints what
 * the model would read, then shows what actually lies on disk.
 */
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createVault } from '../src/index.js';

const vault = await createVault(); // store: ./.memvault
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
const root = join(process.cwd(), '.memvault');
console.log('\nOn disk (names and contents encrypted; the user id is a keyed hash):');
for (const file of (await walk(root)).slice(0, 8)) console.log(`  .memvault/${relative(root, file)}`);
