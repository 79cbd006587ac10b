/**
 * Every token line the user's history keeps, read through the user's export (a tar archive of the
 * current files and every kept version, src/crypto/export.ts): the export is the one reader that
 * goes through every kept version with the verified read, so a version it refuses fails the check.
 */
import type { Vault } from '../../../src/index.js';

export async function keptTokens(vault: Vault, user: string): Promise<Set<string>> {
  const { default: tar } = await import('tar-stream');
  const exported = await vault.exportUser(user);
  const extract = tar.extract();
  const tokens = new Set<string>();
  const read = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (header.name.startsWith('history/'))
          for (const line of Buffer.concat(chunks).toString('utf8').split('\n'))
            if (line.startsWith('t:')) tokens.add(line);
        next();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  exported.stream.pipe(extract);
  await Promise.all([read, exported.done]);
  return tokens;
}
