/**
 * Records nobody can forge or shorten. A key only memvault holds authenticates
 * every record (format v2, HMAC of the hash); a checkpoint file or an expected head witnesses the
 * tail; processes sharing one audit file keep one chain that verifies.
 */
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditWriter } from '../../src/audit/writer.js';
import { auditMac, recordHash } from '../../src/audit/chain.js';
import { readCheckpointFile } from '../../src/audit/checkpoints.js';
import { listSealedSegments } from '../../src/audit/segments.js';
import { collectFileChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { registerAuditCommands, type AuditCommandDeps } from '../../src/cli/commands/audit.js';
import { CliError } from '../../src/cli/errors.js';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { rotateKeys } from '../../src/crypto/operations.js';
import { createVault } from '../../src/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { runCli } from '../cli/helpers.js';
import { tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function temp(): string {
  const t = tempDir();
  cleanup = t.cleanup;
  return t.dir;
}

const KEY = new Uint8Array(randomBytes(32));
const lines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n');
const last = (file: string) => JSON.parse(lines(file).at(-1)!) as Record<string, unknown>;

async function writeLog(
  file: string,
  count: number,
  extra: Partial<Parameters<typeof AuditWriter.open>[0]> = {},
): Promise<void> {
  const writer = await AuditWriter.open({ file, instanceId: 'node-a', macKey: KEY, ...extra });
  for (let i = 0; i < count; i++) writer.append({ type: 'command', command: 'view', uid: 'u_1', outcome: 'ok' });
  await writer.close();
}

/** What an attacker with write access to the file can build with the package's own recordHash. */
function forgeNext(file: string, fields: Record<string, unknown>): Record<string, unknown> {
  const previous = last(file);
  const body: Record<string, unknown> = {
    v: previous['v'],
    seq: (previous['seq'] as number) + 1,
    time: new Date().toISOString(),
    type: 'erase',
    instance: previous['instance'],
    prevHash: previous['hash'],
    ...fields,
  };
  body['hash'] = recordHash(body);
  return body;
}

async function verifyCli(
  args: string[],
  deps: AuditCommandDeps = {},
): Promise<{ out: string; err: string; exitCode: number }> {
  const out: string[] = [];
  const err: string[] = [];
  let exitCode = 0;
  const program = new Command().exitOverride();
  registerAuditCommands(program, {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    setExitCode: (c) => (exitCode = c),
    ...deps,
  });
  try {
    await program.parseAsync(['audit', 'verify', ...args], { from: 'user' });
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    err.push(e.message);
    exitCode = e.exitCode;
  }
  return { out: out.join(''), err: err.join(''), exitCode };
}

describe('authenticated records (format v2)', () => {
  it('every record carries a MAC under the audit key, and the chain verifies with that key only', async () => {
    const file = join(temp(), 'a.jsonl');
    await writeLog(file, 10);
    const records = lines(file).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.every((r) => r['v'] === 2 && typeof r['mac'] === 'string')).toBe(true);
    expect((await verifyChains(await collectFileChains([file]), { macKey: KEY })).ok).toBe(true);
    const other = await verifyChains(await collectFileChains([file]), { macKey: new Uint8Array(32) });
    expect(other.failures[0]?.reason).toMatch(/MAC does not match/);
  });

  it('a forged appended record with a correct recordHash is detected: without a MAC, with a made-up MAC, or copied from another record', async () => {
    const dir = temp();
    const file = join(dir, 'a.jsonl');
    await writeLog(file, 5);
    const genuine = readFileSync(file, 'utf8');
    const noMac = forgeNext(file, { v: 1 });
    const madeUp = forgeNext(file, {});
    madeUp['mac'] = randomBytes(32).toString('hex');
    const copied = forgeNext(file, {});
    copied['mac'] = last(file)['mac'];
    for (const [name, forged, withoutKey] of [
      ['no MAC', noMac, /a record without MAC follows authenticated records/],
      ['made-up MAC', madeUp, undefined],
      ['copied MAC', copied, undefined],
    ] as const) {
      writeFileSync(file, `${genuine}${JSON.stringify(forged)}\n`);
      const withKey = await verifyChains(await collectFileChains([file]), { macKey: KEY });
      expect(withKey.ok, name).toBe(false);
      expect(withKey.failures[0]).toMatchObject({ line: 7, seq: 7 });
      const keyless = await verifyChains(await collectFileChains([file]));
      if (withoutKey) expect(keyless.failures[0]?.reason).toMatch(withoutKey);
      else expect(keyless.chains[0]!.macsUnchecked).toBeGreaterThan(0);
      // The CLI never accepts unchecked MACs: it loads the key, or fails.
      const cli = await verifyCli([file], { auditKeyOf: async () => KEY });
      expect(cli.exitCode, name).toBe(1);
      const noKey = await verifyCli([file], { auditKeyOf: async () => Promise.reject(new Error('no key file')) });
      expect(noKey.exitCode, name).toBe(1);
    }
    writeFileSync(file, genuine);
    expect((await verifyCli([file], { auditKeyOf: async () => KEY })).out).toMatch(/authenticated seq 1-\d+/);
  });

  it('a chain rewritten whole without MACs verifies structurally but fails with the key', async () => {
    const file = join(temp(), 'a.jsonl');
    const writer = await AuditWriter.open({ file, instanceId: 'node-a' }); // no key: v1, as a forger would write
    for (let i = 0; i < 4; i++) writer.append({ type: 'erase', counts: { objects: 0 } });
    await writer.close();
    expect((await verifyChains(await collectFileChains([file]))).ok).toBe(true);
    const withKey = await verifyChains(await collectFileChains([file]), { macKey: KEY });
    expect(withKey.failures[0]?.reason).toMatch(/none of the records is authenticated/);
    const cli = await verifyCli([file, '--data-store', 'file:///x'], { auditKeyOf: async () => KEY });
    expect(cli.exitCode).toBe(1);
    // Without a key the summary says what it did not prove.
    expect((await verifyCli([file])).out).toMatch(/NOT authenticated/);
  });

  it('createVault derives the audit key from the deployment secret; it survives a master key rotation', async () => {
    const dir = temp();
    const store = new MemoryStore();
    const oldKey = new Uint8Array(randomBytes(32));
    const file = join(dir, 'vault.jsonl');
    const vault = await createVault({ store, encryption: { masterKey: oldKey }, audit: { file } });
    await vault.run('ann', { command: 'create', path: '/memories/a.md', file_text: 'x' });
    await vault.close();
    const newKey = new Uint8Array(randomBytes(32));
    await rotateKeys({ store, from: await createLocalKeyProvider(oldKey), to: await createLocalKeyProvider(newKey) });
    const provider = await createEncryptedCodecProvider({ store, keyProvider: await createLocalKeyProvider(newKey) });
    const report = await verifyChains(await collectFileChains([file]), { macKey: provider.auditMacKey() });
    expect(report.ok).toBe(true);
    expect(report.chains[0]!.authenticatedFrom).toBe(1);
    await provider.close();
  });
});

describe('tail truncation with a witness', () => {
  it('a checkpoint file detects records cut off the end; without it verify says the tail is not witnessed', async () => {
    const dir = temp();
    const file = join(dir, 'audit.jsonl');
    const checkpoints = join(dir, 'elsewhere', 'checkpoints.jsonl');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'elsewhere'));
    await writeLog(file, 23, { checkpoint: { file: checkpoints, every: 5 } });
    const witnessed = await readCheckpointFile(checkpoints);
    expect(witnessed.length).toBeGreaterThanOrEqual(5);
    expect(witnessed.at(-1)).toMatchObject({ instance: 'node-a', seq: 24 }); // start + 23 commands, checkpointed on close
    const intact = await verifyCli([file, '--checkpoints', checkpoints], { auditKeyOf: async () => KEY });
    expect(intact.exitCode, intact.err).toBe(0);
    expect(intact.out).toMatch(/tail witnessed \(checkpoint/);

    writeFileSync(file, `${lines(file).slice(0, -3).join('\n')}\n`); // three whole records cut off
    expect((await verifyChains(await collectFileChains([file]), { macKey: KEY })).ok).toBe(true); // the chain alone cannot tell
    expect((await verifyCli([file], { auditKeyOf: async () => KEY })).out).toMatch(/tail NOT witnessed/);
    const cut = await verifyCli([file, '--checkpoints', checkpoints], { auditKeyOf: async () => KEY });
    expect(cut.exitCode).toBe(1);
    expect(cut.err).toMatch(
      /the chain ends at seq 21, but checkpoint .* witnessed seq 24 .*: 3 record\(s\) were cut off the end/,
    );
  });

  it('a checkpoint file replaced by a checkpoint without MAC does not pass a cut tail off as witnessed', async () => {
    const dir = temp();
    const file = join(dir, 'audit.jsonl');
    const checkpoints = join(dir, 'cp.jsonl');
    await writeLog(file, 8, { checkpoint: { file: checkpoints } });
    writeFileSync(file, `${lines(file).slice(0, -3).join('\n')}\n`); // three records cut off
    const head = last(file);
    // The writer's checkpoint line for the new end, without its MAC.
    const stripped = {
      v: 2,
      type: 'checkpoint',
      instance: head['instance'],
      seq: head['seq'],
      hash: head['hash'],
      time: head['time'],
    };
    writeFileSync(checkpoints, `${JSON.stringify(stripped)}\n`);
    for (const args of [[], ['--structure-only']]) {
      const r = await verifyCli([file, '--checkpoints', checkpoints, ...args], { auditKeyOf: async () => KEY });
      expect(r.exitCode, r.out).toBe(1);
      expect(r.err).toMatch(/checkpoint .* carries no MAC but witnesses an authenticated record/);
      expect(r.out).not.toMatch(/tail witnessed/);
    }
  });

  it('an expected head passed to verify does the same', async () => {
    const file = join(temp(), 'audit.jsonl');
    await writeLog(file, 8);
    const head = last(file);
    const expect9 = `node-a:${head['seq'] as number}:${head['hash'] as string}`;
    expect((await verifyCli([file, '--expect-head', expect9], { auditKeyOf: async () => KEY })).exitCode).toBe(0);
    writeFileSync(file, `${lines(file).slice(0, -1).join('\n')}\n`);
    const cut = await verifyCli([file, '--expect-head', expect9], { auditKeyOf: async () => KEY });
    expect(cut.exitCode).toBe(1);
    expect(cut.err).toMatch(/1 record\(s\) were cut off the end/);
    await expect(verifyCli([file, '--expect-head', 'not-a-head'])).rejects.toThrow(/argument 'not-a-head' is invalid/);
  });

  it('a checkpoint not written with the key is refused', async () => {
    const dir = temp();
    const file = join(dir, 'audit.jsonl');
    const checkpoints = join(dir, 'cp.jsonl');
    await writeLog(file, 3, { checkpoint: { file: checkpoints } });
    const head = { instance: 'node-a', seq: 2, hash: '0'.repeat(64), time: new Date().toISOString() };
    appendFileSync(
      checkpoints,
      `${JSON.stringify({ v: 2, type: 'checkpoint', ...head, mac: auditMac(new Uint8Array(32), 'checkpoint', JSON.stringify(head)) })}\n`,
    );
    const r = await verifyCli([file, '--checkpoints', checkpoints], { auditKeyOf: async () => KEY });
    expect(r.exitCode).toBe(1);
    expect(r.err).toMatch(/checkpoint MAC does not match/);
  });
});

describe('several processes on one audit file', () => {
  function runFixture(args: string[]): Promise<void> {
    const script = join(import.meta.dirname, 'fixtures', 'audit-process.ts');
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}: ${stderr}`))));
    });
  }

  it('three writers in shared mode, rotating segments, keep one chain that verifies', async () => {
    const file = join(temp(), 'shared.jsonl');
    await Promise.all([
      runFixture([file, 'x', '40', 'shared']),
      runFixture([file, 'x', '40', 'shared']),
      runFixture([file, 'x', '40', 'shared']),
    ]);
    const report = await verifyChains(await collectFileChains([file]));
    expect(report.failures).toEqual([]);
    expect(report.chains).toHaveLength(1);
    expect(report.chains[0]!.segments).toBeGreaterThan(3);
    // 3 start records + 120 commands, plus one seal per sealed segment.
    expect(report.totals.records).toBe(3 + 120 + listSealedSegments(file).length);
  }, 120_000);

  it('three `memvault exec` processes on one --audit-file: a genuine log verifies, MACs checked', async () => {
    const dir = temp();
    const env = { MEMVAULT_MASTER_KEY: Buffer.from(KEY).toString('base64') };
    const store = pathToFileURL(join(dir, 'data')).href;
    const auditFile = join(dir, 'audit.jsonl');
    await runCli(['exec', '--user', 'seed', '--store', store, '{"command":"view","path":"/memories"}'], {
      cwd: dir,
      env,
    });
    const input = Array.from({ length: 15 }, (_, i) =>
      JSON.stringify({ command: 'create', path: `/memories/n${i}.md`, file_text: `v${i}` }),
    ).join('\n');
    const runs = await Promise.all(
      ['p1', 'p2', 'p3'].map((user) =>
        runCli(['exec', '--user', user, '--store', store, '--audit-file', auditFile], { cwd: dir, env, input }),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const records = lines(auditFile).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r['type'] === 'command')).toHaveLength(45);
    expect(new Set(records.map((r) => r['instance'])).size).toBe(1);
    const verified = await runCli(['audit', 'verify', '--data-store', store, auditFile], { cwd: dir, env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/1 instance\(s\), 1 segment\(s\), 48 record\(s\)/);
    expect(verified.stdout).toMatch(/authenticated seq 1-48/);
  }, 180_000);
});
