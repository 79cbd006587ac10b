import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMemvaultApp } from '../lib/index.js';

interface TemplateJson {
  Resources: Record<string, { Type: string }>;
  Outputs: Record<string, unknown>;
}

function synthInto(outdir: string, sweeper: boolean): { assembly: CloudAssembly; template: TemplateJson } {
  const { app } = buildMemvaultApp({ outdir, sweeper });
  const assembly = app.synth();
  const templatePath = join(outdir, 'MemvaultStack.template.json');
  return { assembly, template: JSON.parse(readFileSync(templatePath, 'utf8')) as TemplateJson };
}

describe('example app synth (in-process, offline, no credentials)', () => {
  let outdir: string;
  let withSweeperDir: string;
  let plain: { assembly: CloudAssembly; template: TemplateJson };
  let withSweeper: { assembly: CloudAssembly; template: TemplateJson };

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'memvault-cdk-'));
    withSweeperDir = mkdtempSync(join(tmpdir(), 'memvault-cdk-sweeper-'));
    plain = synthInto(outdir, false);
    withSweeper = synthInto(withSweeperDir, true);
  });
  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
    rmSync(withSweeperDir, { recursive: true, force: true });
  });

  it('writes the manifest and the MemvaultStack template into the given outdir', () => {
    expect(existsSync(join(outdir, 'manifest.json'))).toBe(true);
    expect(existsSync(join(outdir, 'MemvaultStack.template.json'))).toBe(true);
    expect(plain.assembly.directory).toBe(outdir);
    expect(plain.assembly.stacks.map((s) => s.stackName)).toEqual(['MemvaultStack']);
  });

  it('is environment-agnostic, so it needed no account, region or lookup', () => {
    const stack = plain.assembly.getStackByName('MemvaultStack');
    expect(stack.environment.account).toBe('unknown-account');
    expect(stack.environment.region).toBe('unknown-region');
    expect(plain.assembly.manifest.missing ?? []).toEqual([]);
  });

  it('has the storage, the role and the outputs, and no sweeper when it is turned off', () => {
    const types = Object.values(plain.template.Resources).map((r) => r.Type);
    expect(types.filter((t) => t === 'AWS::S3::Bucket')).toHaveLength(2);
    expect(types).toContain('AWS::KMS::Key');
    expect(types).toContain('AWS::IAM::ManagedPolicy');
    expect(types).not.toContain('AWS::Events::Rule');
    expect(Object.keys(plain.template.Outputs).sort()).toEqual(
      ['ApplicationRoleArn', 'AuditStoreUrl', 'KmsKeyArn', 'StoreUrl'].sort(),
    );
  });

  it('has the scheduled Lambda sweeper by default, its code bundled into the assembly without Docker', () => {
    const types = Object.values(withSweeper.template.Resources).map((r) => r.Type);
    expect(types).toContain('AWS::Events::Rule');
    expect(types).toContain('AWS::Lambda::Function');
    expect(types).not.toContain('AWS::ECS::TaskDefinition');
    expect(types).not.toContain('AWS::EC2::VPC');
    const manifest = JSON.parse(readFileSync(join(withSweeperDir, 'MemvaultStack.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging: string } }>;
    };
    const zips = Object.values(manifest.files).filter((f) => f.source.packaging === 'zip');
    expect(zips).toHaveLength(1);
    const bundle = readFileSync(join(withSweeperDir, zips[0]!.source.path, 'index.mjs'), 'utf8');
    expect(bundle).toContain('memvault.sweep');
    expect(bundle).toContain('s/sweep-state.json');
  });
});
