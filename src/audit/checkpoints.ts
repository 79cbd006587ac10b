import { fileLines } from './segments.js';
import type { ChainWitness } from './verify.js';

const HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Reads a checkpoint file (written by the audit writer's `checkpoint` option): one JSON line per
 * checkpoint, `{"v":2,"type":"checkpoint","instance","seq","hash","time","mac"}`. A line that is
 * not a checkpoint is an error: a witness that cannot be read must not quietly witness less.
 */
export async function readCheckpointFile(file: string): Promise<ChainWitness[]> {
  const witnesses: ChainWitness[] = [];
  for await (const { line, lineNumber } of fileLines(file)) {
    if (line.trim() === '') continue;
    const source = `checkpoint ${file} line ${lineNumber}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`${source} is not valid JSON`);
    }
    const c = value as Record<string, unknown>;
    if (
      typeof value !== 'object' ||
      value === null ||
      c['type'] !== 'checkpoint' ||
      typeof c['instance'] !== 'string' ||
      typeof c['seq'] !== 'number' ||
      !Number.isSafeInteger(c['seq']) ||
      typeof c['hash'] !== 'string' ||
      !HASH_PATTERN.test(c['hash']) ||
      (c['mac'] !== undefined && (typeof c['mac'] !== 'string' || !HASH_PATTERN.test(c['mac'])))
    ) {
      throw new Error(`${source} is not a checkpoint`);
    }
    witnesses.push({
      instance: c['instance'],
      seq: c['seq'],
      hash: c['hash'],
      ...(typeof c['time'] === 'string' ? { time: c['time'] } : {}),
      ...(typeof c['mac'] === 'string' ? { mac: c['mac'] } : {}),
      source,
    });
  }
  return witnesses;
}

/** `--expect-head [INSTANCE:]SEQ:HASH`: a head the operator recorded elsewhere (trusted as given). */
export function parseExpectedHead(value: string): ChainWitness | undefined {
  const match = /^(?:([A-Za-z0-9._-]{1,64}):)?(\d+):([0-9a-f]{64})$/.exec(value);
  if (!match) return undefined;
  return {
    ...(match[1] !== undefined ? { instance: match[1] } : {}),
    seq: Number(match[2]),
    hash: match[3]!,
    source: '--expect-head',
    givenByOperator: true,
  };
}
