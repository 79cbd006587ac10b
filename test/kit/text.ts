/** Text and bytes in tests, named for the direction: `encode` makes UTF-8 bytes, `decode` reads them. */
export const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
export const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
