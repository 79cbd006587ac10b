/**
 * `memvault/s3`'s createS3Store with its argument checks: a misspelt
 * `conditionChecks` or option is CONFIG, never a silent default. Kept apart from functions.ts so
 * that the package root never loads the AWS SDK.
 */
import { createS3Store as createS3StoreUnchecked, type S3Store, type S3StoreOptions } from '../store/s3.js';
import { checkOptions, ifGiven, invalidArgument } from '../util/validate.js';
import { checkS3Options } from './vault-options.js';

export function createS3Store(options: S3StoreOptions): S3Store {
  const given = checkOptions(
    'createS3Store options',
    options,
    ['url', 's3', 'conditionChecks', 'restateTagsOnReplace'],
    { required: true, code: 'CONFIG' },
  );
  if (typeof given['url'] !== 'string')
    throw invalidArgument('createS3Store: url', "an 's3://bucket/prefix' URL", given['url'], 'CONFIG');
  ifGiven(given['s3'], (s3) => {
    if (typeof s3 !== 'object' || s3 === null)
      throw invalidArgument('createS3Store: s3', 'an S3Client or its config', s3, 'CONFIG');
  });
  const { url: _url, s3: _s3, ...s3Options } = given;
  checkS3Options('createS3Store', s3Options);
  return createS3StoreUnchecked(options);
}
