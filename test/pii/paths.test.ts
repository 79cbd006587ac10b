/**
 * Values in file and directory names are user data. Names a command writes
 * (create, rename destination) follow the policy: `reject` refuses the command, `redact` stores the
 * name with each value replaced by REDACTED-<TYPE>-<8 hex> (valid, unique per value, the same for
 * the same value so the model can keep using the name it wrote), `allow` keeps it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { PiiMiddlewareOptions } from '../../src/pipeline/pii-redactor.js';
import { MemoryStore } from '../../src/store/memory.js';

const NAMES = [
  ['e-mail', 'jane.roe@example.com', 'EMAIL'],
  ['phone', '+49 171 2345678', 'PHONE'],
  ['card', '4111111111111111', 'CREDIT_CARD'],
  ['SSN', 'ssn 536-22-8711', 'US_SSN'],
] as const;

let vault: Vault | undefined;
afterEach(async () => {
  await vault?.close();
  vault = undefined;
});

async function setup(pii?: PiiMiddlewareOptions) {
  const store = new MemoryStore();
  vault = await createVault({ store, encryption: false, ...(pii ? { pii } : {}) });
  const v = vault;
  const text = (c: unknown) => (typeof c === 'string' ? c : JSON.stringify(c));
  const run = async (input: unknown) => {
    const r = await v.run('u', input);
    return { ...r, text: text(r.content) };
  };
  // Plain keys are percent-encoded names: decode them to look for the value.
  const keys = () => decodeURIComponent([...store.keys()].join('\n'));
  return { run, keys };
}

describe.each(NAMES)('a %s in a path', (_kind, value, type) => {
  it('redact (default): stored and shown under REDACTED-TYPE-hash; the original name finds it', async () => {
    const { run, keys } = await setup();
    const created = await run({ command: 'create', path: `/memories/clients/${value}.md`, file_text: 'notes' });
    expect(created.isError).toBe(false);
    expect(created.text).toMatch(new RegExp(`/memories/clients/(?:ssn )?REDACTED-${type}-[0-9a-f]{8}\\.md`));
    expect(created.text).not.toContain(value);
    const listing = await run({ command: 'view', path: '/memories' });
    expect(listing.text).toMatch(new RegExp(`REDACTED-${type}-[0-9a-f]{8}\\.md`));
    expect(listing.text).not.toContain(value);
    expect(keys()).not.toContain(value);
    // The model may keep using the name it wrote: it maps to the same stored name.
    const viewed = await run({ command: 'view', path: `/memories/clients/${value}.md` });
    expect(viewed.isError).toBe(false);
    expect(viewed.text).toContain('notes');
    const edited = await run({
      command: 'str_replace',
      path: `/memories/clients/${value}.md`,
      old_str: 'notes',
      new_str: 'more notes',
    });
    expect(edited.isError).toBe(false);
  });

  it('reject: create and rename to such a name are refused, naming the kind and not the value', async () => {
    const { run, keys } = await setup({ policy: { [type]: 'reject' } });
    const created = await run({ command: 'create', path: `/memories/${value}/a.md`, file_text: 'x' });
    expect(created).toMatchObject({ isError: true, code: 'PII_REJECTED' });
    expect(created.text).toMatch(/^Error: Nothing was saved: the path contains/);
    expect(created.text).not.toContain(value);
    expect(keys()).toBe('');
    await run({ command: 'create', path: '/memories/plain.md', file_text: 'x' });
    const renamed = await run({ command: 'rename', old_path: '/memories/plain.md', new_path: `/memories/${value}.md` });
    expect(renamed).toMatchObject({ isError: true, code: 'PII_REJECTED' });
    expect(keys()).not.toContain(value);
    expect((await run({ command: 'view', path: '/memories/plain.md' })).isError).toBe(false);
    // Looking a name up is never refused: it just does not exist.
    expect(await run({ command: 'view', path: `/memories/${value}.md` })).toMatchObject({
      isError: true,
      code: 'NOT_FOUND',
    });
  });

  it('allow: the name is kept', async () => {
    const { run, keys } = await setup({ policy: { [type]: 'allow' } });
    const created = await run({ command: 'create', path: `/memories/${value}.md`, file_text: 'x' });
    expect(created.isError).toBe(false);
    expect(keys()).toContain(value);
  });
});

describe('redacted names', () => {
  it('two different values give two different names, so neither file overwrites the other', async () => {
    const { run } = await setup();
    await run({ command: 'create', path: '/memories/jane.roe@example.com.md', file_text: 'Jane' });
    await run({ command: 'create', path: '/memories/john.roe@example.com.md', file_text: 'John' });
    const listing = (await run({ command: 'view', path: '/memories' })).text;
    expect(listing.match(/REDACTED-EMAIL-[0-9a-f]{8}\.md/g)?.length).toBe(2);
    expect((await run({ command: 'view', path: '/memories/jane.roe@example.com.md' })).text).toContain('Jane');
    expect((await run({ command: 'view', path: '/memories/john.roe@example.com.md' })).text).toContain('John');
  });

  it('the same value in another case maps to the same name', async () => {
    const { run } = await setup();
    await run({ command: 'create', path: '/memories/Jane.Roe@Example.com.md', file_text: 'Jane' });
    expect((await run({ command: 'view', path: '/memories/jane.roe@example.com.md' })).text).toContain('Jane');
  });

  it('rename to a name with a value: redacted destination; the source is looked up by its own name', async () => {
    const { run } = await setup();
    await run({ command: 'create', path: '/memories/call.md', file_text: 'call notes' });
    const renamed = await run({
      command: 'rename',
      old_path: '/memories/call.md',
      new_path: '/memories/calls/+1 415 555 0132.md',
    });
    expect(renamed.isError).toBe(false);
    expect(renamed.text).toMatch(/to \/memories\/calls\/REDACTED-PHONE-[0-9a-f]{8}\.md$/);
    const back = await run({
      command: 'rename',
      old_path: '/memories/calls/+1 415 555 0132.md',
      new_path: '/memories/call.md',
    });
    expect(back.isError).toBe(false);
  });

  it('a name that the placeholder would make too long is refused without echoing it', async () => {
    const { run } = await setup();
    const long = `${'n'.repeat(240)} a@b.io`;
    const result = await run({ command: 'create', path: `/memories/${long}`, file_text: 'x' });
    expect(result).toMatchObject({ isError: true, code: 'INVALID_PATH' });
    expect(result.text).not.toContain('a@b.io');
  });

  it('with a shared pathKey two vaults map a name to the same stored name', async () => {
    const store = new MemoryStore();
    const a = await createVault({ store, encryption: false, pii: { pathKey: 'deployment-secret' } });
    const b = await createVault({ store, encryption: false, pii: { pathKey: 'deployment-secret' } });
    await a.run('u', { command: 'create', path: '/memories/jane.roe@example.com.md', file_text: 'Jane' });
    const viewed = await b.run('u', { command: 'view', path: '/memories/jane.roe@example.com.md' });
    expect(viewed.isError).toBe(false);
    await b.close();
    await a.close();
  });
});

describe('clean path segments remembered (pii/clean-segments.ts)', () => {
  it('a vault redacts a value in a name each time it is written, after clean commands on the same names', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, encryption: false });
    try {
      for (const path of ['/memories/a/notes.md', '/memories/b/notes.md'])
        expect((await vault.run('u', { command: 'create', path, file_text: 'x' })).isError).toBe(false);
      for (const dir of ['jane.roe@example.com', 'jane.roe@example.com']) {
        const r = await vault.run('u', { command: 'create', path: `/memories/${dir}/notes.md`, file_text: 'y' });
        expect(r.isError).toBe(false);
      }
      const keys = decodeURIComponent([...store.keys()].join('\n'));
      expect(keys).not.toContain('jane.roe');
      expect(keys).toMatch(/REDACTED-EMAIL-[0-9a-f]{8}\/notes\.md/);
    } finally {
      await vault.close();
    }
  });
});
