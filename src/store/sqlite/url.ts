import { isAbsolute, resolve } from 'node:path';
import { MemvaultError } from '../../errors.js';
import type { SqliteDurability } from './database.js';

const BAD_SQLITE_URL =
  'Error: a SQLite store URL is sqlite:/path/to/store.db (or sqlite:///path, or a path relative to the working directory), optionally with ?durability=full or ?durability=normal.';

/**
 * `sqlite:<path>[?durability=full|normal]`. The path is taken as written (no percent-decoding);
 * `sqlite:///abs` is accepted as the file-URL spelling of `sqlite:/abs`; a relative path is resolved
 * against the working directory. Anything else is a CONFIG error, never a default.
 */
export function parseSqliteUrl(url: string): { path: string; durability: SqliteDurability } {
  let rest = url.slice('sqlite:'.length);
  let durability: SqliteDurability = 'full';
  const query = rest.indexOf('?');
  if (query >= 0) {
    const params = new URLSearchParams(rest.slice(query + 1));
    rest = rest.slice(0, query);
    for (const [name, value] of params) {
      if (name !== 'durability' || (value !== 'full' && value !== 'normal'))
        throw new MemvaultError('CONFIG', BAD_SQLITE_URL);
      durability = value;
    }
  }
  if (rest.startsWith('//')) {
    if (!rest.startsWith('///')) throw new MemvaultError('CONFIG', BAD_SQLITE_URL); // a host part
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.includes('\0') || rest.endsWith('/')) throw new MemvaultError('CONFIG', BAD_SQLITE_URL);
  return { path: isAbsolute(rest) ? rest : resolve(rest), durability };
}
