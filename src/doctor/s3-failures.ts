/** How doctor reads an S3 failure: a check that could not be made, with its real cause. */
import { describeS3Error, type S3Failure } from '../store/s3/errors.js';
import type { DoctorCheck } from './checks.js';

/** The one reading of an S3 failure (store/s3/errors.ts), with the network cause when there was no answer. */
export const failureOf = describeS3Error;

function unsupported(f: S3Failure): boolean {
  return f.status === 501 || f.code === 'NotImplemented' || f.code === 'MethodNotAllowed' || f.status === 405;
}

/** The IAM action behind each API doctor calls, for "access denied" (what to grant). */
const PERMISSION_OF: Record<string, string> = {
  GetBucketVersioning: 's3:GetBucketVersioning',
  GetBucketLifecycleConfiguration: 's3:GetLifecycleConfiguration',
  GetBucketEncryption: 's3:GetEncryptionConfiguration',
  GetPublicAccessBlock: 's3:GetBucketPublicAccessBlock',
  'PutObject with If-None-Match': 's3:PutObject',
  'PutObject with tags': 's3:PutObject and s3:PutObjectTagging',
  'CopyObject onto itself': 's3:GetObject and s3:PutObject',
  'the probe requests': 's3:PutObject, s3:GetObject and s3:DeleteObject',
};

/**
 * A check that could not be made: its real cause (no answer, access denied naming the missing
 * permission, the server not implementing the API). A required one fails doctor (fail closed).
 */
export function unknownCheck(id: string, title: string, required: boolean, api: string, f: S3Failure): DoctorCheck {
  const why = f.network
    ? `${api}: ${f.network}`
    : unsupported(f)
      ? `the server does not support ${api}`
      : ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken'].includes(f.code)
        ? `${api}: the credentials were rejected (${f.code})`
        : f.status === 403 || f.code === 'AccessDenied'
          ? `access denied to ${api}: the credentials lack ${PERMISSION_OF[api] ?? 'the permission for it'}`
          : `${api} failed: ${failureName(f)}${f.status ? ` (${f.status})` : ''}`;
  return { id, title, status: 'unknown', required, detail: `could not check: ${why}` };
}

/**
 * A failure's name for the operator: its code; without an HTTP answer (e.g. CredentialsProviderError)
 * also the SDK's own first sentence, which is then the only statement of the cause.
 */
export function failureName(f: S3Failure): string {
  const sentence = f.message.split('\n')[0]!.slice(0, 160);
  return f.status === undefined && sentence !== '' ? `${f.code}: ${sentence}` : f.code;
}
