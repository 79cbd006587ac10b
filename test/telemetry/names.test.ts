/**
 * src/telemetry is a leaf (the store, crypto and vault layers call into it), so it restates the
 * value sets of its attributes; these stay equal to their sources, and out-of-set values are
 * bounded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_RECORD_TYPES } from '../../src/audit/record.js';
import { PII_TYPES } from '../../src/pii/types.js';
import {
  AUDIT_RECORD_TYPE_VALUES,
  boundedAuditRecordType,
  boundedCode,
  boundedCommand,
  boundedQuotaLimit,
  boundedRequestType,
  COMMAND_VALUES,
  PII_TYPE_VALUES,
} from '../../src/telemetry/names.js';
import { COMMAND_NAMES } from '../../src/tool/types.js';

describe('telemetry value sets', () => {
  it('equal their sources', () => {
    expect([...COMMAND_VALUES]).toEqual([...COMMAND_NAMES]);
    expect([...PII_TYPE_VALUES]).toEqual([...PII_TYPES]);
    expect([...AUDIT_RECORD_TYPE_VALUES]).toEqual([...AUDIT_RECORD_TYPES]);
  });

  it('bound anything else', () => {
    expect(boundedCommand('view')).toBe('view');
    expect(boundedCommand('/memories/secret')).toBe('unknown');
    expect(boundedCommand({ toString: () => 'view' })).toBe('unknown');
    expect(boundedCode('NOT_FOUND')).toBe('NOT_FOUND');
    expect(boundedCode('not found: /memories/x')).toBe('UNSPECIFIED');
    expect(boundedCode('A'.repeat(40))).toBe('UNSPECIFIED');
    expect(boundedRequestType('GET')).toBe('GET');
    expect(boundedRequestType('GetObjectAcl')).toBe('OTHER');
    expect(boundedQuotaLimit('user_bytes')).toBe('user_bytes');
    expect(boundedQuotaLimit('alice@example.com')).toBeUndefined();
    expect(boundedAuditRecordType('command')).toBe('command');
    expect(boundedAuditRecordType('x'.repeat(10))).toBe('other');
  });

  it('src/telemetry imports nothing of memvault but store port types', () => {
    const dir = join(import.meta.dirname, '../../src/telemetry');
    for (const file of readdirSync(dir)) {
      const source = readFileSync(join(dir, file), 'utf8');
      for (const match of source.matchAll(/\b(import|export)(\s+type)?\b[^;]*?\bfrom\s+'([^']+)'/g)) {
        if (!match[3]!.startsWith('../')) continue;
        expect({ file, spec: match[3], typeOnly: match[2] !== undefined }).toEqual({
          file,
          spec: '../store/port.js',
          typeOnly: true,
        });
      }
    }
  });
});
