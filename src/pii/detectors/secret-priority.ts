/** Known token formats and key blocks are certain; a value read from `key = value` is a guess. */
export const SECRET_FORMAT_PRIORITY = 100;
export const SECRET_CONTEXT_PRIORITY = 30;
