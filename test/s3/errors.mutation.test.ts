/**
 * How S3 answers become store outcomes (src/store/s3/errors.ts), case by case: which
 * answers are a lost condition (re-read and retry) and which are a real failure, which 404s mean a
 * missing object, and what a failure's message may name. Pure functions: no server needed.
 */
import { describe, expect, it } from 'vitest';
import {
  describeS3Error,
  isConditionFailure,
  isMissingObject,
  storeUnavailable,
  type S3Failure,
} from '../../src/store/s3/errors.js';

const f = (status: number | undefined, code: string, message = ''): S3Failure => ({ status, code, message });

describe('describeS3Error', () => {
  it('reads the status from $metadata, else $response; the code from Code, name or code, skipping empty and "Error"', () => {
    expect(
      describeS3Error({
        name: 'PreconditionFailed',
        $metadata: { httpStatusCode: 412 },
        message: 'At least one of the pre-conditions you specified did not hold',
      }),
    ).toEqual({
      status: 412,
      code: 'PreconditionFailed',
      message: 'At least one of the pre-conditions you specified did not hold',
    });
    expect(describeS3Error({ Code: 'NoSuchKey', name: 'Other', $response: { statusCode: 404 } })).toEqual({
      status: 404,
      code: 'NoSuchKey',
      message: '',
    });
    expect(describeS3Error({ Code: '', name: 'Error', code: 'ECONNRESET', message: 'socket hang up' })).toEqual({
      status: undefined,
      code: 'ECONNRESET',
      message: 'socket hang up',
      network: 'connection reset (ECONNRESET)',
    });
    expect(describeS3Error({ name: 'Error', $metadata: { httpStatusCode: '500' } })).toEqual({
      status: undefined,
      code: 'UnknownError',
      message: '',
    });
    expect(describeS3Error({ $metadata: { httpStatusCode: 503 }, $response: { statusCode: 500 } }).status).toBe(503);
    expect(describeS3Error({ Code: 42, name: 'SlowDown', message: 7 })).toEqual({
      status: undefined,
      code: 'SlowDown',
      message: '',
    });
  });

  it('names the network cause of a request that got no answer: errno on the error, its cause or an attempt, or a timeout', () => {
    expect(describeS3Error({ name: 'Error', code: 'ECONNREFUSED' }).network).toBe('connection refused (ECONNREFUSED)');
    expect(describeS3Error({ name: 'Error', cause: { code: 'ENOTFOUND' } }).network).toBe('host not found (ENOTFOUND)');
    const aggregate = { name: 'AggregateError', errors: [null, { code: 'EHOSTUNREACH' }] };
    expect(describeS3Error(aggregate)).toEqual({
      status: undefined,
      code: 'AggregateError',
      message: '',
      network: 'host unreachable (EHOSTUNREACH)',
    });
    expect(describeS3Error({ name: 'Error', code: 'EWHATEVER' }).network).toBe('no answer (EWHATEVER)');
    expect(describeS3Error({ name: 'TimeoutError', message: 'timed out' }).network).toBe('request timed out');
    expect(describeS3Error({ name: 'RequestTimeout' }).network).toBe('request timed out');
    // An HTTP answer is never a network failure, whatever code it carries; S3 codes are not errnos.
    expect(
      describeS3Error({ name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: { httpStatusCode: 504 } }).network,
    ).toBeUndefined();
    expect(describeS3Error({ name: 'SlowDown', code: 'SlowDown' }).network).toBeUndefined();
    expect(
      describeS3Error({ name: 'CredentialsProviderError', message: 'Could not load credentials from any providers' })
        .network,
    ).toBeUndefined();
    expect(describeS3Error({ name: 'Error', code: 42, errors: 'ECONNREFUSED' }).network).toBeUndefined();
  });

  it('anything that is not an object is an unknown error without status', () => {
    for (const value of [undefined, null, 'NoSuchKey', 404, true])
      expect(describeS3Error(value)).toEqual({ status: undefined, code: 'UnknownError', message: '' });
  });
});

describe('isMissingObject', () => {
  it('NoSuchKey is missing for every operation; a bare 404 only for HEAD, and never NoSuchBucket', () => {
    for (const op of ['GetObject', 'HeadObject', 'DeleteObject', 'CopyObject'] as const)
      expect(isMissingObject(f(404, 'NoSuchKey'), op)).toBe(true);
    expect(isMissingObject(f(404, 'NotFound'), 'HeadObject')).toBe(true);
    expect(isMissingObject(f(404, 'NotFound'), 'GetObject')).toBe(false);
    expect(isMissingObject(f(404, 'NoSuchBucket'), 'HeadObject')).toBe(false);
    expect(isMissingObject(f(403, 'AccessDenied'), 'HeadObject')).toBe(false);
    expect(isMissingObject(f(410, 'Gone'), 'HeadObject')).toBe(false);
  });
});

describe('isConditionFailure', () => {
  it('on a conditional request: 412, PreconditionFailed, 409, ConditionalRequestConflict, NoSuchKey, and RGW 500 ECANCELED', () => {
    for (const failure of [
      f(412, 'PreconditionFailed'),
      f(412, 'Whatever'),
      f(400, 'PreconditionFailed'),
      f(409, 'ConditionalRequestConflict'),
      f(undefined, 'ConditionalRequestConflict'),
      f(409, 'OperationAborted'),
      f(404, 'NoSuchKey'),
      f(500, 'UnknownError'),
      f(500, 'InternalError', 'op status -125 ECANCELED'),
      f(500, 'ecanceled'),
    ]) {
      expect(isConditionFailure(failure, true), JSON.stringify(failure)).toBe(true);
    }
  });

  it('never on an unconditional request, and not for outages on a conditional one', () => {
    for (const failure of [
      f(412, 'PreconditionFailed'),
      f(409, 'ConditionalRequestConflict'),
      f(404, 'NoSuchKey'),
      f(500, 'UnknownError'),
    ]) {
      expect(isConditionFailure(failure, false), JSON.stringify(failure)).toBe(false);
    }
    for (const failure of [
      f(500, 'InternalError', 'We encountered an internal error'),
      f(503, 'SlowDown'),
      f(503, 'UnknownError'),
      f(403, 'AccessDenied'),
      f(undefined, 'ECONNRESET'),
      f(404, 'NoSuchBucket'),
      f(400, 'BadDigest'),
    ]) {
      expect(isConditionFailure(failure, true), JSON.stringify(failure)).toBe(false);
    }
  });
});

describe('storeUnavailable', () => {
  it('names the operation, the status and a code-shaped code, as STORE_UNAVAILABLE', () => {
    const error = storeUnavailable('PutObject', f(503, 'SlowDown'));
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.message).toBe('S3 PutObject failed (HTTP 503, SlowDown)');
    expect(storeUnavailable('GetObject', f(undefined, 'ECONNRESET')).message).toBe(
      'S3 GetObject failed (no response, ECONNRESET)',
    );
    expect(storeUnavailable('GetObject', f(undefined, 'UND_ERR_SOCKET')).message).toBe(
      'S3 GetObject failed (no response, UND_ERR_SOCKET)',
    );
    expect(storeUnavailable('HeadObject', f(400, 'X.Y_9')).message).toBe('S3 HeadObject failed (HTTP 400, X.Y_9)');
  });

  it('never repeats a bucket, a host or anything that is not an identifier where the code belongs', () => {
    for (const leaked of [
      'my-bucket',
      'Bucket with space',
      'Host.s3.amazonaws.com',
      'Evil.com',
      'A'.repeat(65),
      '',
      'x/y',
      'Name:1',
      'Bucket-name',
      '1Code',
    ]) {
      expect(storeUnavailable('ListObjectsV2', f(500, leaked)).message, leaked).toBe(
        'S3 ListObjectsV2 failed (HTTP 500, UnknownError)',
      );
    }
    expect(storeUnavailable('ListObjectsV2', f(500, `A${'b'.repeat(63)}`)).message).toBe(
      `S3 ListObjectsV2 failed (HTTP 500, A${'b'.repeat(63)})`,
    );
    expect(storeUnavailable('ListObjectsV2', f(500, 'Comcast')).message).toBe(
      'S3 ListObjectsV2 failed (HTTP 500, Comcast)',
    );
  });
});
