// Synthesizes the example MemvaultStack: `npx tsx infra/bin/app.ts` (npm run synth) or `cdk synth` from infra/.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildMemvaultApp } from '../lib/build-app.js';

const infraDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// The cdk CLI tells the app where to write through CDK_OUTDIR; run directly, it goes to infra/cdk.out.
const outdir = process.env.CDK_OUTDIR ?? resolve(infraDir, 'cdk.out');
const { app } = buildMemvaultApp({ outdir });
const assembly = app.synth();
for (const stack of assembly.stacks) {
  console.log(`${stack.stackName}: ${resolve(assembly.directory, stack.templateFile)}`);
}
