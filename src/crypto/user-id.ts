/**
 * The one check of a user id (validateUserId), shared by the codec's uidOf and every entry point.
 */
import { MemvaultError } from '../errors.js';
import { MAX_USER_ID_LENGTH } from '../store/layout.js';

// Node 20 has String.prototype.isWellFormed; the ES2023 lib this project compiles against does not declare it.
const isWellFormedUtf16 = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * The one check of a user id, wherever one enters (createVault's handlers, run and files, the CLI's
 * --user, and this codec's uidOf). User ids come from the host application; one that is refused is a
 * host bug, refused loudly. The rule that keeps users apart: the uid is a keyed hash of the id's
 * UTF-8 bytes, and UTF-8 encoding maps every lone surrogate to the same U+FFFD, so "victim\ud800",
 * "victim\udfff" and "victim\ufffd" would all be one user. Ill-formed UTF-16 is refused, and so is
 * U+FFFD itself: it is what a lossy decoding upstream leaves where bytes were lost, so two ids
 * that were different before that decoding could arrive here as one. Every id accepted is
 * well-formed, so its UTF-8 encoding is one-to-one, and distinct ids have distinct uids.
 */
export function validateUserId(userId: unknown): string {
  if (typeof userId !== 'string' || userId.trim().length === 0) {
    throw new MemvaultError('INVALID_USER', 'memvault: the user id must be a non-empty string');
  }
  if (userId.length > MAX_USER_ID_LENGTH) {
    throw new MemvaultError('INVALID_USER', `memvault: the user id is longer than ${MAX_USER_ID_LENGTH} characters`);
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(userId)) {
    throw new MemvaultError('INVALID_USER', 'memvault: the user id contains control characters');
  }
  if (!isWellFormedUtf16(userId)) {
    throw new MemvaultError(
      'INVALID_USER',
      'memvault: the user id is not well-formed Unicode (it has an unpaired surrogate), so it cannot be told apart from other ids',
    );
  }
  if (userId.includes('\ufffd')) {
    throw new MemvaultError(
      'INVALID_USER',
      'memvault: the user id contains U+FFFD, the replacement character of a lossy decoding, so it cannot be told apart from other ids; pass the id as it was before decoding',
    );
  }
  return userId;
}
