// The CDK construct cannot import src/ (it is built on its own), so it keeps a copy of the storage
// layout: its IAM grants and lifecycle rules name the prefixes. This holds the copy equal to
// src/store/layout.ts, the one definition, so a change to either fails here until both agree.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AUDIT_KEY_PREFIX,
  DEPLOYMENT_RECORD_KEY,
  HISTORY_TAG_KEY,
  HISTORY_TAG_VALUE,
  KEYS_PREFIX,
  SWEEP_STATE_KEY,
  SWEEP_STATE_PREFIX,
  USERS_PREFIX,
  userFilesPrefix,
} from '../../src/store/layout.js';

const construct = readFileSync(join(import.meta.dirname, '../../infra/lib/memvault-storage.ts'), 'utf8');

function literal(pattern: RegExp): string {
  const match = pattern.exec(construct);
  expect(match, `infra/lib/memvault-storage.ts no longer matches ${pattern}`).not.toBeNull();
  return match![1]!;
}

describe('the CDK construct and src/store/layout.ts name the same objects', () => {
  it('user files, key records, the sweep state and audit segments', () => {
    expect(literal(/const filesPrefix = `\$\{this\.memoryPrefix\}([^`]*)`/)).toBe(USERS_PREFIX);
    expect(literal(/const keysPrefix = `\$\{this\.memoryPrefix\}([^`]*)`/)).toBe(KEYS_PREFIX);
    expect(literal(/const SWEEP_STATE_SEGMENT = '([^']*)'/)).toBe(SWEEP_STATE_PREFIX);
    expect(literal(/props\.auditPrefix \?\? '([^']*)'/)).toBe(AUDIT_KEY_PREFIX);
    expect(literal(/export const HISTORY_TAG_KEY = '([^']*)'/)).toBe(HISTORY_TAG_KEY);
    expect(literal(/export const HISTORY_TAG_VALUE = '([^']*)'/)).toBe(HISTORY_TAG_VALUE);
  });

  it('the layout composes as documented', () => {
    expect(userFilesPrefix('abc')).toBe('u/abc/f/');
    expect(DEPLOYMENT_RECORD_KEY).toBe('k/_deployment');
    expect(SWEEP_STATE_KEY.startsWith(SWEEP_STATE_PREFIX)).toBe(true);
    expect(SWEEP_STATE_KEY).toBe('s/sweep-state.json');
  });
});
