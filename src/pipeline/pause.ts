/**
 * Pause memory (docs/page.md): a setting the person controls. While it is on, the model's writes
 * (create, str_replace, insert, delete, rename) are refused with PAUSED and a message that says why;
 * views still work, and writes by the person (the page) or the host are not refused. It is part of
 * the vault's default chain, so it holds in every process on the store, not only in `memvault serve`.
 *
 * The setting is one object per user, u/{uid}/p/settings (the pseudonymous store uid, as every object
 * of the user), sealed with AES-256-GCM under a key derived from the user's audit pseudonym key:
 * that key comes from the user's first data key, so it outlives a re-key and dies with erasure (as
 * the user's prefix is deleted with it). Plain codecs (no encryption) store it plain, as they store
 * files. A model write costs one GET of it, just before its first change; a view costs nothing. A record that does not open counts
 * as paused (fail closed) until the person sets it again.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { CodecProvider } from '../crypto/user-codec.js';
import { userPrefix } from '../store/layout.js';
import type { ObjectStore } from '../store/port.js';
import { messages } from '../tool/messages.js';
import { MemvaultError } from '../errors.js';
import type { Middleware } from './context.js';
import { GatedFiles } from './gated-files.js';

const RECORD_VERSION = 1;
const PLAIN_MARK = 0x7b; // '{': a plain record is its JSON
const SEALED_MARK = 0x01;
const WRITE_COMMANDS: ReadonlySet<string> = new Set(['create', 'str_replace', 'insert', 'delete', 'rename']);

/** The key of a user's settings object. */
export function settingsKeyOf(uid: string): string {
  return `${userPrefix(uid)}p/settings`;
}

/** The sealing key of a user's settings (undefined: a codec without user keys, stored plain). */
export type SettingsKeyOf = (uid: string) => Promise<Uint8Array | undefined>;

/** Settings keys from the vault's codec: derived from the user's audit pseudonym key (kept in the key cache). */
export function settingsKeysOf(codecs: CodecProvider): SettingsKeyOf {
  return async (uid) => {
    if (!codecs.forUid) return undefined;
    const pseudonymKey = (await codecs.forUid(uid)).auditPseudonymKey?.();
    if (!pseudonymKey) return undefined;
    try {
      return new Uint8Array(hkdfSync('sha256', pseudonymKey, uid, 'memvault user settings v1', 32));
    } finally {
      pseudonymKey.fill(0);
    }
  };
}

interface SettingsRecord {
  v: number;
  paused: boolean;
  /** When it was last set (ms since the epoch). */
  at: number;
}

export class UserSettings {
  constructor(
    private readonly store: ObjectStore,
    private readonly keyOf: SettingsKeyOf,
  ) {}

  async paused(uid: string): Promise<boolean> {
    const stored = await this.store.get(settingsKeyOf(uid));
    if (!stored) return false;
    const key = await this.keyOf(uid);
    try {
      return this.open(uid, stored.body, key).paused;
    } catch {
      return true; // fail closed: a record that does not open (altered, another user's) pauses
    } finally {
      key?.fill(0);
    }
  }

  async setPaused(uid: string, paused: boolean, now = Date.now()): Promise<void> {
    const record: SettingsRecord = { v: RECORD_VERSION, paused, at: now };
    const key = await this.keyOf(uid);
    try {
      await this.store.put(settingsKeyOf(uid), this.seal(uid, record, key));
    } finally {
      key?.fill(0);
    }
  }

  private seal(uid: string, record: SettingsRecord, key: Uint8Array | undefined): Uint8Array {
    const json = Buffer.from(JSON.stringify(record), 'utf8');
    if (!key) return json;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(settingsKeyOf(uid), 'utf8'));
    const body = Buffer.concat([cipher.update(json), cipher.final()]);
    return Buffer.concat([Buffer.of(SEALED_MARK), iv, cipher.getAuthTag(), body]);
  }

  private open(uid: string, stored: Uint8Array, key: Uint8Array | undefined): SettingsRecord {
    const bytes = Buffer.from(stored);
    let json: Buffer;
    if (!key) {
      if (bytes[0] !== PLAIN_MARK) throw new Error('not a plain settings record');
      json = bytes;
    } else {
      if (bytes[0] !== SEALED_MARK) throw new Error('not a sealed settings record');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 13));
      decipher.setAAD(Buffer.from(settingsKeyOf(uid), 'utf8'));
      decipher.setAuthTag(bytes.subarray(13, 29));
      json = Buffer.concat([decipher.update(bytes.subarray(29)), decipher.final()]);
    }
    const record = JSON.parse(json.toString('utf8')) as SettingsRecord;
    if (record.v !== RECORD_VERSION || typeof record.paused !== 'boolean') throw new Error('unknown settings record');
    return record;
  }
}

/**
 * Refuses the model's writes while the user's memory is paused: below validation (it needs the
 * command), above the quota (a write the quota refuses reads nothing). The setting is read at the
 * command's first change (gated-files.ts), so a command that ends without writing (no match, not
 * found) costs no read, and a view never does.
 */
export function pauseGuard(settings: UserSettings): Middleware {
  return async (ctx, next) => {
    if (!ctx.command || !WRITE_COMMANDS.has(ctx.command.command) || (ctx.writer ?? 'model') !== 'model') return next();
    const uid = ctx.uid;
    ctx.files = new GatedFiles(ctx.files, async () => {
      if (await settings.paused(uid)) throw new MemvaultError('PAUSED', messages.memoryPaused());
    });
    return next();
  };
}
