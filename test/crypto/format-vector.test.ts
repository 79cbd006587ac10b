import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import {
  computeUid,
  deriveLocalMasterKeys,
  deriveUserKeys,
  encryptSegment,
  localUnwrap,
  localWrapWithNonce,
  openContent,
  sealContentWithNonce,
} from '../../src/crypto/format.js';
import { encodeKeyRecord } from '../../src/crypto/key-provider.js';
import { DEPLOYMENT_RECORD_KEY, userKeyKey } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { MemoryStore } from '../../src/store/memory.js';

/** The ```vector block of docs/format.md, as name -> value (hex fields decoded by the caller). */
function readVector(): Record<string, string> {
  const doc = readFileSync(new URL('../../docs/format.md', import.meta.url), 'utf8');
  const block = /```vector\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/format.md has no ```vector block');
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const match = /^([a-z_]+)(?: \((?:text|utf8)\))?:\s+(.*)$/.exec(line.trim());
    if (match) fields[match[1]!] = match[2]!;
  }
  return fields;
}

const vector = readVector();
const field = (name: string): string => {
  const value = vector[name];
  if (value === undefined) throw new Error(`vector field ${name} missing`);
  return value;
};
const hex = (name: string) => new Uint8Array(Buffer.from(field(name), 'hex'));
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const plaintext = () => new TextEncoder().encode(field('plaintext').replace(/\\n/g, '\n'));

beforeAll(async () => {
  await loadSodium();
});

describe('docs/format.md test vector', () => {
  it('has every field', () => {
    expect(Object.keys(vector).sort()).toEqual(
      [
        'master_key', 'deployment_secret', 'data_key', 'wrap_nonce', 'content_nonce', 'user_id', 'path', 'plaintext', 'key_version',
        'key_id', 'wrap_key', 'uid', 'content_key', 'name_key', 'name_siv_key', 'commitment', 'wrapped_deployment', 'wrapped_data_key',
        'segment_notes', 'segment_todo', 'object_key', 'content_object',
      ].sort(),
    );
  });

  it('derives the master-key values, uid and subkeys', () => {
    const master = deriveLocalMasterKeys(hex('master_key'));
    expect(master.keyId).toBe(field('key_id'));
    expect(toHex(master.wrapKey)).toBe(field('wrap_key'));
    expect(computeUid(hex('deployment_secret'), field('user_id'))).toBe(field('uid'));
    const keys = deriveUserKeys(hex('data_key'), Number(field('key_version')));
    expect(toHex(keys.contentKey)).toBe(field('content_key'));
    expect(toHex(keys.nameKey)).toBe(field('name_key'));
    expect(toHex(keys.nameSivKey)).toBe(field('name_siv_key'));
    expect(toHex(keys.commitment)).toBe(field('commitment'));
  });

  it('wraps the deployment secret and the data key', () => {
    const { wrapKey } = deriveLocalMasterKeys(hex('master_key'));
    const version = Number(field('key_version'));
    expect(toHex(localWrapWithNonce(wrapKey, hex('deployment_secret'), '_deployment', version, hex('wrap_nonce')))).toBe(field('wrapped_deployment'));
    expect(toHex(localWrapWithNonce(wrapKey, hex('data_key'), field('uid'), version, hex('wrap_nonce')))).toBe(field('wrapped_data_key'));
    expect(toHex(localUnwrap(wrapKey, hex('wrapped_data_key'), field('uid'), version)!)).toBe(field('data_key'));
  });

  it('encrypts the names and seals the content', () => {
    const keys = deriveUserKeys(hex('data_key'), Number(field('key_version')));
    expect(encryptSegment(keys, '/memories', 'notes')).toBe(field('segment_notes'));
    expect(encryptSegment(keys, '/memories/notes', 'todo.md')).toBe(field('segment_todo'));
    const sealed = sealContentWithNonce(keys, field('uid'), field('path'), plaintext(), hex('content_nonce'));
    expect(toHex(sealed)).toBe(field('content_object'));
    expect(openContent(keys, field('uid'), field('path'), hex('content_object'))).toEqual(plaintext());
  });

  it('the codec, given the vector\'s records in a store, produces the object key and opens the object', async () => {
    const store = new MemoryStore();
    const keyProvider = await createLocalKeyProvider(hex('master_key'));
    const record = (wrapped: Uint8Array) => encodeKeyRecord({ kind: 'local', keyId: field('key_id'), keyVersion: 1, wrapped });
    await store.put(DEPLOYMENT_RECORD_KEY, record(hex('wrapped_deployment')));
    await store.put(userKeyKey(field('uid')), record(hex('wrapped_data_key')));
    const codec = await (await createEncryptedCodecProvider({ store, keyProvider })).forUser(field('user_id'));
    expect(codec.uid).toBe(field('uid'));
    expect(codec.keyFor(field('path'))).toBe(field('object_key'));
    expect(codec.pathFor(field('object_key'))).toBe(field('path'));
    expect(codec.open(field('path'), hex('content_object'))).toEqual(plaintext());
  });
});
