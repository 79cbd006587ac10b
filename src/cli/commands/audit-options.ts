/**
 * The options of `memvault audit verify` and `export` (audit.ts): their parsers and the check that
 * every input file is there.
 */
import { statSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { ExportFormat } from '../../audit/export.js';
import type { ChainWitness } from '../../audit/verify.js';
import { parseExpectedHead } from '../../audit/checkpoints.js';
import { runtimeError, usageError } from '../errors.js';

export interface SourceOptions {
  store?: string;
}

export interface CheckOptions {
  dataStore?: string;
  structureOnly?: boolean;
  checkpoints?: string[];
  expectHead?: ChainWitness[];
}

function collectValues<T>(parse: (value: string) => T): (value: string, previous: T[] | undefined) => T[] {
  return (value, previous) => [...(previous ?? []), parse(value)];
}

function parseHead(value: string): ChainWitness {
  const head = parseExpectedHead(value);
  if (!head) throw new InvalidArgumentError('give [INSTANCE:]SEQ:HASH (HASH: 64 hex digits)');
  return head;
}

/** The options verify and export share: how records are authenticated and what witnesses the tail. */
export function addCheckOptions(command: Command): Command {
  return command
    .option(
      '--data-store <url>',
      'the data store whose deployment holds the audit key (env MEMVAULT_STORE; default ./.memvault.db); never created',
    )
    .option(
      '--structure-only',
      'check the hash chain only, not the MACs (the result then proves nothing about who wrote the records)',
    )
    .option(
      '--checkpoints <file>',
      "a checkpoint file (the writer's tail witness); repeatable",
      collectValues((v) => v),
    )
    .option(
      '--expect-head <head>',
      'a head recorded elsewhere, [INSTANCE:]SEQ:HASH; repeatable',
      collectValues(parseHead),
    );
}

/**
 * Every input must be there and readable: a missing file is a usage error, not "0 records"
 * (a verifier that reports success over nothing fails open).
 */
export function checkInputFiles(files: readonly string[]): void {
  for (const file of files) {
    try {
      statSync(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw usageError(`no such audit file or directory: ${file}`);
      throw runtimeError(`cannot read ${file} (${code ?? 'error'})`, e);
    }
  }
}

export function parseDate(value: string, bound: 'start' | 'end'): Date {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(dateOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`not a date: ${value}`);
  // A day given as --to is included whole: the bound becomes the next midnight (UTC), exclusive.
  return new Date(dateOnly && bound === 'end' ? ms + 24 * 60 * 60 * 1000 : ms);
}

export function parseFormat(value: string): ExportFormat {
  if (value !== 'jsonl' && value !== 'csv') throw new InvalidArgumentError('format must be jsonl or csv');
  return value;
}
