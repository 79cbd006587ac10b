import { createHmac, hash, timingSafeEqual } from 'node:crypto';

/**
 * The hash chain. Each record's `hash` is SHA-256 over a canonical serialisation of the record
 * without its own `hash` field; the record carries the previous record's hash in `prevHash`, so a
 * record cannot be edited, dropped, inserted or moved without breaking the link to its successor.
 *
 * Canonical JSON: object keys sorted by UTF-16 code unit order, recursively; no whitespace; keys
 * with `undefined` values omitted (as JSON.stringify does). The writer writes this text itself, with
 * `hash` and `mac` appended (line.ts); the verifier parses the line and re-canonicalises.
 */

/** prevHash of the very first record of an instance. */
export const GENESIS_HASH = '0'.repeat(64);

/** Domain separation: a memvault audit hash is never a valid hash of anything else. */
const HASH_DOMAIN = 'memvault-audit-v1\n';

export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      // JSON has no NaN/Infinity; a record holding one could not round-trip through the file.
      if (!Number.isFinite(value)) throw new TypeError('audit records hold finite numbers only');
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson((value[i] as unknown) ?? null);
        return `${out}]`;
      }
      // Plain loops rather than entries/filter/map: this runs once per command on the hot path.
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object).sort();
      let out = '{';
      for (const key of keys) {
        const item = object[key];
        if (item === undefined) continue;
        out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(item)}`;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`audit records cannot hold a ${typeof value}`);
  }
}

/** SHA-256 of a record's canonical serialisation (as produced by canonicalJson, without `hash`). */
export function hashCanonical(canonical: string): string {
  // The one-shot hash: half the cost of a Hash object for a record-sized input (same digest).
  return hash('sha256', HASH_DOMAIN + canonical, 'hex');
}

/** The hash a record must carry: over every field except `hash` and `mac` themselves. */
export function recordHash(record: Readonly<Record<string, unknown>>): string {
  const { hash: _ignored, mac: _mac, ...rest } = record;
  return hashCanonical(canonicalJson(rest));
}

/**
 * Authentication (format v2). The hash already covers every other field and, through prevHash,
 * the whole chain before it; the MAC binds that hash to a key that only memvault holds, so write
 * access to the audit file alone cannot produce a record that verifies. Domain-separated from
 * checkpoints, so one can never stand in for the other.
 */
const MAC_DOMAIN = { record: 'memvault-audit-mac-v2\n', checkpoint: 'memvault-audit-checkpoint-v2\n' } as const;

export function auditMac(key: Uint8Array, kind: keyof typeof MAC_DOMAIN, text: string): string {
  return createHmac('sha256', key).update(MAC_DOMAIN[kind]).update(text).digest('hex');
}

export function macMatches(key: Uint8Array, kind: keyof typeof MAC_DOMAIN, text: string, mac: string): boolean {
  const expected = Buffer.from(auditMac(key, kind, text), 'hex');
  const given = Buffer.from(mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Audit keys are 32 bytes (HMAC-SHA256); anything else is a configuration error. */
export const AUDIT_KEY_BYTES = 32;
