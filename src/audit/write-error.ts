/** What an append throws when its record could not be written (the writer then fails closed). */
import { MemvaultError } from '../errors.js';

/**
 * Thrown by `append` when the record could not be written. The message is what the model would
 * read; it says the command's fate is unknown because the command ran before its record failed.
 */
export class AuditWriteError extends MemvaultError {
  constructor(cause: unknown) {
    super(
      'INTERNAL',
      'Error: The memory store could not record this command in its audit log, so the result cannot be confirmed. Please view the affected path before retrying.',
      { cause },
    );
    this.name = 'AuditWriteError';
  }
}

/** A rotation cannot seal segment INDEX: its file name is taken (checked before the seal is written). */
export function sealTargetTaken(index: number): Error {
  return new Error(`audit: cannot seal segment ${index}: a file of that name already exists`);
}
