import { App } from 'aws-cdk-lib';
import { MemvaultStack } from './memvault-stack.js';

export interface BuildMemvaultAppOptions {
  /** Where `app.synth()` writes the cloud assembly. */
  readonly outdir: string;
  /** The scheduled Lambda sweeper; false leaves it out (run `memvault expire` from cron). @default true */
  readonly sweeper?: boolean;
}

export interface MemvaultApp {
  readonly app: App;
  readonly stack: MemvaultStack;
}

/**
 * The example app. The stack is environment-agnostic (no account, no region, no lookups), so synth
 * runs offline without credentials; `cdk deploy` fills in the account and region at deploy time.
 * The sweeper's Lambda code is bundled by esbuild during synth, without Docker.
 */
export function buildMemvaultApp(options: BuildMemvaultAppOptions): MemvaultApp {
  // No creation stack traces in the assembly metadata: they carry host paths and change with every checkout.
  const app = new App({ outdir: options.outdir, stackTraces: false });
  const contextSweeper: unknown = app.node.tryGetContext('memvault:sweeper');
  const sweeper = options.sweeper ?? (contextSweeper === false || contextSweeper === 'false' ? false : true);
  const stack = new MemvaultStack(app, 'MemvaultStack', {
    description: 'memvault storage: memory and audit buckets, KMS key, application role, expiry',
    analyticsReporting: false,
    storage: { sweeper: sweeper ? {} : false },
  });
  return { app, stack };
}
