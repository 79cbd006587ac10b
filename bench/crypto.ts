/**
 * Cost of the crypto layer, in one run:  npx tsx bench/crypto.ts [samples]
 * Each row is the median over `samples` batches (after one warm-up batch) of many operations, in microseconds per operation,
 * with a baseline measured in the same run: copying the bytes (what the plain codec costs), and
 * Node's native ChaCha20-Poly1305 (OpenSSL) next to libsodium's WebAssembly XChaCha20-Poly1305.
 * The per-command with/without comparison is in bench/commands.ts.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { createEncryptedCodecProvider } from '../src/crypto/codec.js';
import { createLocalKeyProvider } from '../src/crypto/local-key.js';
import { loadSodium } from '../src/crypto/sodium.js';
import { MemoryStore } from '../src/store/memory.js';
import { median, printTable } from './stats.js';

const samples = Number(process.argv[2] ?? 15);

function perOp(batch: number, fn: (i: number) => unknown): number {
  // One unmeasured batch first, so that the JIT has compiled the path being measured.
  for (let i = 0; i < batch; i++) fn(i);
  const times: number[] = [];
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) fn(i);
    times.push(((performance.now() - t0) * 1000) / batch);
  }
  return median(times);
}

async function perOpAsync(batch: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(batch, 50); i++) await fn(i);
  const times: number[] = [];
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) await fn(i);
    times.push(((performance.now() - t0) * 1000) / batch);
  }
  return median(times);
}

const t0 = performance.now();
await loadSodium();
const readyMs = performance.now() - t0;
const t1 = performance.now();
await loadSodium();
const readyAgainMs = performance.now() - t1;

const store = new MemoryStore();
const keyProvider = await createLocalKeyProvider(new Uint8Array(randomBytes(32)));
const provider = await createEncryptedCodecProvider({ store, keyProvider, cache: { maxEntries: 100_000 } });
const codec = await provider.forUser('bench-user');

const rows: Array<Array<string | number>> = [];
for (const size of [4096, 65536]) {
  const label = size === 4096 ? '4 KiB' : '64 KiB';
  const batch = size === 4096 ? 2000 : 200;
  const plaintext = new Uint8Array(randomBytes(size));
  const path = '/memories/projects/notes.md';
  const sealed = codec.seal(path, plaintext);
  const copy = perOp(batch, () => plaintext.slice());
  const nodeKey = randomBytes(32);
  const native = perOp(batch, () => {
    const cipher = createCipheriv('chacha20-poly1305', nodeKey, randomBytes(12), { authTagLength: 16 });
    cipher.update(plaintext);
    cipher.final();
    return cipher.getAuthTag();
  });
  const seal = perOp(batch, () => codec.seal(path, plaintext));
  const open = perOp(batch, () => codec.open(path, sealed));
  rows.push([`seal ${label}`, seal, copy, seal / copy, native, seal / native]);
  rows.push([`open ${label}`, open, copy, open / copy, native, open / native]);
}

const deepPath = '/memories/projects/2025/clients/acme/meeting-notes.md';
const deepKey = codec.keyFor(deepPath);
const keyFor = perOp(5000, () => codec.keyFor(deepPath));
const pathFor = perOp(5000, () => codec.pathFor(deepKey));
const plainKey = perOp(5000, () => `u/uid/f${deepPath.slice('/memories'.length)}`);
// Cold: every call names a new top directory, so all five segments miss the per-user name memo.
let c = 0;
const coldKeys: string[] = [];
const keyForCold = perOp(1000, () =>
  coldKeys.push(codec.keyFor(`/memories/p${c++}${deepPath.slice('/memories/projects'.length)}`)),
);
const coldReader = await (await createEncryptedCodecProvider({ store, keyProvider })).forUser('bench-user');
let d = 0;
const pathForCold = perOp(1000, () => coldReader.pathFor(coldKeys[d++ % coldKeys.length]!));
rows.push(['keyFor, 5 segments, memo hit', keyFor, plainKey, keyFor / plainKey, '', '']);
rows.push(['pathFor, 5 segments, memo hit', pathFor, plainKey, pathFor / plainKey, '', '']);
rows.push(['keyFor, 5 new segments', keyForCold, plainKey, keyForCold / plainKey, '', '']);
rows.push(['pathFor, 5 new segments', pathForCold, plainKey, pathForCold / plainKey, '', '']);

// forUser: a cache hit, and a cold user (store read + unwrap + subkey derivation, or create).
const warm = await perOpAsync(2000, () => provider.forUser('bench-user'));
let n = 0;
const cold = await perOpAsync(200, () => provider.forUser(`new-user-${n++}`));
const coldProvider = await createEncryptedCodecProvider({
  store,
  keyProvider,
  cache: { maxEntries: 1, wipeGraceMs: 0 },
});
let m = 0;
const reopen = await perOpAsync(200, () => coldProvider.forUser(`new-user-${m++ % n}`));
rows.push(['forUser, cached key', warm, '', '', '', '']);
rows.push(['forUser, new user (create key)', cold, '', '', '', '']);
rows.push(['forUser, existing user, cache miss', reopen, '', '', '', '']);

console.log(
  `libsodium ready: first await ${readyMs.toFixed(1)} ms, second await ${readyAgainMs.toFixed(3)} ms (paid once per process)`,
);
console.log(`median of ${samples} batches, microseconds per operation; MemoryStore (no I/O)\n`);
printTable(['operation', 'µs/op', 'baseline: copy µs', 'x copy', 'node chacha20-poly1305 µs', 'x node'], rows);
await provider.close();
await coldProvider.close();
