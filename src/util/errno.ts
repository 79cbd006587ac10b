/** The errno code (`ENOENT`, `EEXIST`, ...) of a Node.js system error, or undefined for anything else. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the error is a system error with one of these codes. */
export function hasErrno(error: unknown, ...codes: string[]): boolean {
  const code = errnoOf(error);
  return code !== undefined && codes.includes(code);
}
