import { App } from 'aws-cdk-lib';
import { MemvaultStack } from './memvault-stack.js';

export interface BuildMemvaultAppOptions {
  /** Where `app.synth()` writes the cloud assembly. */
  readonly outdir: string;
  /** Sweeper image URI; without one the example stack has no sweeper and cron runs `memvault expire`. */
  readonly sweeperImageUri?: string;
}

export interface MemvaultApp {
  readonly app: App;
  readonly stack: MemvaultStack;
}

/**
 * The example app. The stack is environment-agnostic (no account, no region, no lookups), so synth
 * runs offline without credentials; `cdk deploy` fills in the account and region at deploy time.
 */
export function buildMemvaultApp(options: BuildMemvaultAppOptions): MemvaultApp {
  // No creation stack traces in the assembly metadata: they carry host paths and change with every checkout.
  const app = new App({ outdir: options.outdir, stackTraces: false });
  const contextImage: unknown = app.node.tryGetContext('memvault:sweeperImageUri');
  const imageUri = options.sweeperImageUri ?? (typeof contextImage === 'string' ? contextImage : undefined);
  const stack = new MemvaultStack(app, 'MemvaultStack', {
    description: 'memvault storage: memory and audit buckets, KMS key, application role, expiry',
    analyticsReporting: false,
    storage: { sweeper: imageUri ? { imageUri } : false },
  });
  return { app, stack };
}
