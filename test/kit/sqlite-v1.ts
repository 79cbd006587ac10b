/**
 * A version 1 SQLite store (the body second, as earlier builds of this release wrote it), made with
 * node:sqlite directly: the tests of the schema move, of doctor and of the tools that only read.
 * Each row is [key, body, metadata, tags]; the ETag and time are made up.
 */
export async function writeVersion1Database(
  path: string,
  rows: Array<[key: string, body: Uint8Array, metadata?: string, tags?: string]> = [],
): Promise<void> {
  const { DatabaseSync } = await import('node:sqlite');
  const v1 = new DatabaseSync(path);
  try {
    v1.exec('PRAGMA journal_mode = WAL');
    v1.exec(`CREATE TABLE objects (key BLOB NOT NULL UNIQUE, body BLOB NOT NULL, size INTEGER NOT NULL,
      etag TEXT NOT NULL, modified INTEGER NOT NULL, metadata TEXT NOT NULL, tags TEXT NOT NULL)`);
    v1.exec('PRAGMA application_id = 1836477556');
    v1.exec('PRAGMA user_version = 1');
    const insert = v1.prepare('INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, ?)');
    rows.forEach(([key, body, metadata, tags], i) =>
      insert.run(Buffer.from(key), body, body.byteLength, `e${i + 1}`, 1000 * (i + 1), metadata ?? '{}', tags ?? '{}'),
    );
  } finally {
    v1.close();
  }
}
