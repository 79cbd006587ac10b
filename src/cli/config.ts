import { pino, type Logger } from 'pino';
import { readEnv } from '../config/env.js';
import { defaultStoreUrl } from '../store/open.js';

/**
 * Configuration shared by every CLI command: flags first, then the environment (the one table of
 * config/env.ts, applied here and by fromEnv()), then defaults. The embedded default store is
 * ./.memvault.db (created on first use). The CLI is an application: it hands process.env over; the
 * library never reads it by itself.
 */
export interface StoreFlags {
  store?: string;
}

export function storeUrlFrom(flags: StoreFlags, env: NodeJS.ProcessEnv = process.env): string {
  return flags.store ?? readEnv(env, 'store') ?? defaultStoreUrl();
}

/**
 * Operational logs go to stderr (stdout carries command output), quiet by default. An unknown
 * MEMVAULT_LOG_LEVEL is a CONFIG error (pino would throw its own, with a stack trace).
 */
export function cliLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const level = readEnv(env, 'logLevel') ?? 'warn';
  return pino({ level, base: { app: 'memvault' } }, pino.destination(2));
}
