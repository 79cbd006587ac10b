/**
 * The PII acceptance check through the real vault: a file written with PII reads back with
 * placeholders, and no detected value appears in the bucket (keys, bodies, metadata, tags), the
 * operational logs or the audit records. Plain codec on purpose: with encryption the bucket would
 * hide the values anyway, so only the plain store shows that redaction, not encryption, removed them.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/record.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { auditMiddleware } from '../../src/pipeline/audit.js';
import { redactForLog } from '../../src/pipeline/pii-redactor.js';
import { MemoryStore } from '../../src/store/memory.js';
import { storedText } from '../kit/stores.js';

const VALUES = {
  email: 'jane.doe@example.com',
  phone: '+1 415 555 0132',
  card: '4111 1111 1111 1111',
  iban: 'DE89 3704 0044 0532 0130 00',
  ssn: '536-22-8711',
  ip: '81.2.69.142',
  token: 'ghp_R8x2Lm4Nq7Vt1Bz9Kc3Hw6Jy5Pd0Fs2Ga8Ue',
};
const NOTE = [
  '# Jane',
  `- mail ${VALUES.email}, phone ${VALUES.phone}`,
  `- card ${VALUES.card}; IBAN ${VALUES.iban}; SSN ${VALUES.ssn}`,
  `- home server ${VALUES.ip}; GitHub token ${VALUES.token}`,
].join('\n');
const PATH_EMAIL = 'bob.smith@example.org';

let vault: Vault | undefined;
afterEach(async () => {
  await vault?.close();
  vault = undefined;
});

async function setup() {
  const store = new MemoryStore();
  const audit: AuditEntry[] = [];
  let logText = '';
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logText += chunk.toString('utf8');
        done();
      },
    }),
  );
  vault = await createVault({
    store,
    encryption: false,
    logger,
    outerMiddlewares: [auditMiddleware({ append: (e) => audit.push(e), writable: true }, { redactPath: redactForLog })],
  });
  return { vault, store, audit, logs: () => logText };
}

describe('PII end to end through createVault', () => {
  it('stores and returns placeholders; no value reaches the bucket, the logs or the audit records', async () => {
    const { vault, store, audit, logs } = await setup();
    const created = await vault.run('user-1', { command: 'create', path: '/memories/jane.md', file_text: NOTE });
    expect(created.isError).toBe(false);

    // The model edits text it remembers as it wrote it: old_str matches in its stored (redacted) form.
    const edited = await vault.run('user-1', {
      command: 'str_replace',
      path: '/memories/jane.md',
      old_str: `mail ${VALUES.email}`,
      new_str: `work mail ${VALUES.email}`,
    });
    expect(edited).toMatchObject({ isError: false });
    await vault.run('user-1', {
      command: 'insert',
      path: '/memories/jane.md',
      insert_line: 1,
      insert_text: `backup phone ${VALUES.phone}\n`,
    });
    await vault.run('user-1', { command: 'create', path: `/memories/${PATH_EMAIL}.md`, file_text: 'contact notes' });

    const view = await vault.run('user-1', { command: 'view', path: '/memories/jane.md' });
    const shown = typeof view.content === 'string' ? view.content : JSON.stringify(view.content);
    for (const placeholder of ['EMAIL', 'PHONE', 'CREDIT_CARD', 'IBAN', 'US_SSN', 'IP_ADDRESS', 'SECRET']) {
      expect(shown).toContain(`[REDACTED:${placeholder}]`);
    }
    expect(shown).toContain('work mail [REDACTED:EMAIL]');
    expect(shown).toContain('backup phone [REDACTED:PHONE]');

    const bucket = await storedText(store);
    const auditText = JSON.stringify(audit);
    for (const value of Object.values(VALUES)) {
      expect(shown, value).not.toContain(value);
      expect(bucket, value).not.toContain(value);
      expect(logs(), value).not.toContain(value);
      expect(auditText, value).not.toContain(value);
    }
    expect(bucket).toContain('[REDACTED:CREDIT_CARD]'); // the body really is in this store, redacted

    // A path with an address is stored under a redacted name; the audit record carries that name.
    expect(auditText).not.toContain(PATH_EMAIL);
    expect(audit.some((e) => /^\/memories\/REDACTED-EMAIL-[0-9a-f]{8}\.md$/.test(e.path ?? ''))).toBe(true);
    // Counts by type reach the audit record.
    expect(audit[0]?.decisions).toMatchObject({
      pii: {
        action: 'redacted',
        findings: { EMAIL: 1, PHONE: 1, CREDIT_CARD: 1, IBAN: 1, US_SSN: 1, IP_ADDRESS: 1, SECRET: 1 },
      },
    });
  });

  it('a rejecting policy refuses the write: nothing stored, error names the kind, audit has PII_REJECTED', async () => {
    const store = new MemoryStore();
    const audit: AuditEntry[] = [];
    vault = await createVault({
      store,
      encryption: false,
      pii: { policy: { CREDIT_CARD: 'reject' } },
      outerMiddlewares: [
        auditMiddleware({ append: (e) => audit.push(e), writable: true }, { redactPath: redactForLog }),
      ],
    });
    const result = await vault.run('user-1', {
      command: 'create',
      path: '/memories/pay.md',
      file_text: `card ${VALUES.card}`,
    });
    expect(result).toMatchObject({ isError: true, code: 'PII_REJECTED' });
    expect(result.content).toContain('a payment card number');
    expect(result.content).not.toContain(VALUES.card);
    expect(await storedText(store)).not.toContain('card');
    expect(audit.at(-1)).toMatchObject({ code: 'PII_REJECTED', decisions: { pii: { action: 'rejected' } } });
  });
});
