import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { MemvaultStorage, type MemvaultStorageProps } from './memvault-storage.js';

export interface MemvaultStackProps extends StackProps {
  readonly storage?: MemvaultStorageProps;
}

/** The example stack: one MemvaultStorage with the values an operator needs printed as outputs. */
export class MemvaultStack extends Stack {
  readonly storage: MemvaultStorage;

  constructor(scope: Construct, id: string, props: MemvaultStackProps = {}) {
    super(scope, id, props);
    this.storage = new MemvaultStorage(this, 'Storage', props.storage);

    new CfnOutput(this, 'StoreUrl', {
      description: 'memvault --store value (MEMVAULT_STORE)',
      value: this.storage.storeUrl,
    });
    new CfnOutput(this, 'AuditStoreUrl', {
      description: 'where audit segments are shipped',
      value: this.storage.auditStoreUrl,
    });
    new CfnOutput(this, 'KmsKeyArn', {
      description: 'KMS key for the kms key provider',
      value: this.storage.key.keyArn,
    });
    new CfnOutput(this, 'ApplicationRoleArn', {
      description: 'role the memvault application runs as',
      value: this.storage.applicationRole.roleArn,
    });
  }
}
