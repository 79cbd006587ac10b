/**
 * What an email address may consist of, for both readers of them (email.ts, email-spelt.ts): the
 * RFC 5321 limits, the characters of a local part, and the file extensions that are no TLD.
 */
import { isAsciiAlnum, isUnspacedScript } from '../chars.js';

export const EMAIL_PRIORITY = 70;

// RFC 5321 limits; bounding both scans keeps a megabyte of '@' or of dots linear.
export const MAX_LOCAL = 64;
export const MAX_DOMAIN = 253;

// Accented Latin letters appear in real addresses (josé@, müller.de); CJK text, by contrast, is
// written right against an address ("メールはtaro@example.jpです"), so other scripts end it.
export function isLatinExtended(c: number): boolean {
  return c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7;
}

const LETTER = /\p{L}/u;

// Internationalised addresses (RFC 6531) and domains (IDNA): letters of the scripts written with
// spaces between words (Greek, Cyrillic, Arabic, Hebrew, Devanagari...): "user@пример.рф".
export function isIdnLetter(c: number): boolean {
  if ((c >= 0x400 && c <= 0x481) || (c >= 0x48a && c <= 0x52f)) return true; // Cyrillic letters, without a regex
  return c >= 0x370 && !isUnspacedScript(c) && !(c >= 0xd800 && c <= 0xdfff) && LETTER.test(String.fromCharCode(c));
}

export function isLocalChar(c: number): boolean {
  if (c < 128) return isAsciiAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45 || c === 39;
  return isLatinExtended(c) || isIdnLetter(c);
}

// Asset names such as `logo@2x.png` have the shape of an address but a file extension for a TLD.
export const FILE_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'avif',
  'heic',
  'js',
  'mjs',
  'cjs',
  'ts',
  'tsx',
  'jsx',
  'css',
  'scss',
  'map',
  'json',
  'lock',
  'wasm',
]);
