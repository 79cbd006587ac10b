import { readFileSync } from 'node:fs';
import type { CommandResult } from '../../src/pipeline/context.js';
import type { AuditRecord } from '../../src/audit/record.js';
import { tempDir as kitTempDir } from '../kit/temp.js';

export { canonicalContext, fakeContext } from '../kit/context.js';

/** A scratch directory for audit files. */
export const tempDir = () => kitTempDir('memvault-audit');

export const ok = (text = 'ok'): CommandResult => ({ content: text, isError: false });
export const failed = (code: CommandResult['code'], text = 'Error: no'): CommandResult => ({
  content: text,
  isError: true,
  code,
});

export function readRecords(file: string): AuditRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as AuditRecord);
}
