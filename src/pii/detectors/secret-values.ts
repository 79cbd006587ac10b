import { VALUE_STOPWORDS } from './secret-words.js';

/** The longest password a quoted value with spaces may be ("correct horse battery staple"). */
export const MAX_TYPED_PASSWORD = 128;

// A UUID after a key or token name is the credential (Heroku, Snyk, HubSpot API keys are UUIDs).
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function plausiblePassword(value: string, quoted: boolean): boolean {
  if (value.length < 4) return false;
  // Past 128 characters nobody types a password: an unbroken value that long is a generated one
  // (a hash, a token pasted as the password), a quoted one with spaces is prose.
  if ((!quoted || value.length > MAX_TYPED_PASSWORD) && /\s/.test(value)) return false;
  const lower = value.toLowerCase();
  if (VALUE_STOPWORDS.has(lower)) return false;
  // A plain lowercase word after "password" is usually prose ("password: rotated monthly").
  if (/^[a-zà-ÿ]+$/.test(value) && value.length < 10) return false;
  return true;
}

export function isPlaceholder(value: string): boolean {
  if (value.length === 0) return true;
  if (/^[$%{<[]/.test(value) || value.includes('${') || value.includes('{{')) return true;
  // A plain URL is a reference to where a secret lives; URLs that embed credentials or are
  // secrets themselves (webhooks) are caught by their own rules.
  if (/^[a-z][a-z0-9+.-]{1,20}:\/\//i.test(value)) return true;
  if (/^(?:x+|\*+|\.+|-+|_+|#+|•+|0+|1234|12345|123456)$/i.test(value)) return true;
  if (/^(?:your|my|some|insert|replace|enter|put|example|dummy|fake|test)[_-]?/i.test(value) && !/\d/.test(value))
    return true;
  if (/^(?:your|insert|replace|enter)[_-]/i.test(value)) return true;
  return /REDACTED/i.test(value);
}

/** `password = getPassword()`, `token: process.env.TOKEN`, `secret = config.secret`. */
export function looksLikeCodeReference(text: string, value: string, valueEnd: number): boolean {
  if (text[valueEnd] === '(' || value.includes('(')) return true;
  if (/^(?:process|os|env|config|settings|self|this|cfg|secrets|vars|params|args|req|request|ctx)\b[.[]/.test(value))
    return true;
  // A bare identifier with no digits is a variable, not a literal.
  return /^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*$/.test(value) && /[a-z][A-Z]|_|\./.test(value);
}
