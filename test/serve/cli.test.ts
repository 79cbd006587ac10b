// The serve command's refusals at start-up (one line, exit 2) and --new-api-key. Each case is one
// CLI process (tsx); they run side by side.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseApiKeys } from '../../src/serve.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cliEnv, ONE_LINE, runCli } from '../cli/helpers.js';
import { tempDir } from '../kit/temp.js';

describe('memvault serve (CLI)', () => {
  it('refuses to start without authentication, and --no-auth off loopback; prints new API keys', async () => {
    const temp = tempDir('memvault-serve-cli');
    try {
      const store = `file://${temp.dir}/store`;
      const [none, open, mixed, key, badId] = await Promise.all([
        runCli(['serve', '--store', store], { cwd: temp.dir }),
        runCli(['serve', '--store', store, '--no-auth', '--host', '0.0.0.0'], { cwd: temp.dir }),
        runCli(['serve', '--store', store, '--jwks-url', 'http://127.0.0.1:1/jwks'], { cwd: temp.dir }),
        runCli(['serve', '--new-api-key', 'svc-1'], { cwd: temp.dir }),
        runCli(['serve', '--new-api-key', 'Bad Id'], { cwd: temp.dir }),
      ]);
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(ONE_LINE);
      expect(none.stderr).toContain('no authentication configured');
      expect(open.code).toBe(2);
      expect(open.stderr).toContain('loopback');
      expect(mixed.code).toBe(2);
      expect(mixed.stderr).toContain('--jwks-url, --issuer and --audience go together');
      expect(key.code).toBe(0);
      const made = JSON.parse(key.stdout) as { key: string; entry: unknown };
      const [entry] = parseApiKeys({ keys: [made.entry] });
      expect(entry).toEqual({
        id: 'svc-1',
        sha256: createHash('sha256').update(made.key).digest('hex'),
        scopes: ['act-as'],
      });
      expect(made.key).toMatch(/^mvk_svc-1_[A-Za-z0-9_-]{43}$/);
      expect(badId.code).toBe(2);
      expect(badId.stderr).toMatch(ONE_LINE);
    } finally {
      temp.cleanup();
    }
  }, 60_000);

  it('loads neither Fastify nor jose for another command (the serve entry is imported by its action)', () => {
    // A resolve hook that prints, at exit, every package the process resolved.
    const hook = `import { registerHooks } from 'node:module';
      const seen = new Set();
      registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx);
        const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(r.url); if (m) seen.add(m[1]); return r; } });
      process.on('exit', () => process.stderr.write('PACKAGES ' + [...seen].join(',') + '\\n'));`;
    const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
    const run = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, main, '--help'],
      { env: cliEnv(), encoding: 'utf8' },
    );
    expect(run.status).toBe(0);
    const packages = /PACKAGES (.*)/.exec(run.stderr)?.[1]?.split(',') ?? [];
    expect(packages).toContain('commander');
    expect(packages).not.toContain('fastify');
    expect(packages).not.toContain('jose');
  });
});
