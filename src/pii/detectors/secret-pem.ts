import { isAsciiAlnum } from '../chars.js';
import type { Candidate } from '../types.js';
import { SECRET_FORMAT_PRIORITY } from './secret-priority.js';

const MAX_PEM = 64 * 1024;

/** PEM private key blocks (RSA, EC, OPENSSH, PGP, PKCS#8 plain and encrypted), header to footer. */
export function detectPrivateKeyBlocks(text: string, out: Candidate[]): void {
  let begin = text.indexOf('-----BEGIN ');
  // Footers are looked up once, moving forward, so many headers without a footer stay linear.
  let footer = begin === -1 ? -1 : text.indexOf('-----END ', begin);
  while (begin !== -1) {
    const headerEnd = text.indexOf('-----', begin + 11);
    const header = headerEnd !== -1 && headerEnd - begin < 80 ? text.slice(begin + 11, headerEnd) : '';
    if (!/PRIVATE KEY/.test(header)) {
      begin = text.indexOf('-----BEGIN ', begin + 11);
      continue;
    }
    const bodyStart = headerEnd + 5;
    if (footer !== -1 && footer < bodyStart) footer = text.indexOf('-----END ', bodyStart);
    const nextBegin = text.indexOf('-----BEGIN ', bodyStart);
    let end: number;
    if (footer !== -1 && footer - begin <= MAX_PEM && (nextBegin === -1 || footer < nextBegin)) {
      const close = text.indexOf('-----', footer + 9);
      end = close !== -1 && close - footer < 80 ? close + 5 : footer + 9;
      // Blocks pasted without a line break between them may share dashes ("…KEY-----BEGIN …"):
      // this one ends where the next begins, so that the next is read too.
      if (nextBegin !== -1 && nextBegin < end) end = nextBegin;
    } else {
      end = truncatedBodyEnd(text, bodyStart, Math.min(text.length, begin + MAX_PEM));
    }
    // "-----BEGIN PRIVATE KEY-----\nanything\n-----END…" is a placeholder: a key, even a pasted
    // first line of one, has a body of base64 (an Ed25519 key has over 60 characters of it).
    const bodyEnd = footer !== -1 && footer < end ? footer : end;
    if (base64Count(text, bodyStart, bodyEnd) >= 16)
      out.push({ type: 'SECRET', start: begin, end, priority: SECRET_FORMAT_PRIORITY });
    begin = nextBegin !== -1 && nextBegin < end ? text.indexOf('-----BEGIN ', end) : nextBegin;
  }
}

function base64Count(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to && n < 16; i++) {
    const c = text.charCodeAt(i);
    if (isAsciiAlnum(c) || c === 43 || c === 47) n++;
  }
  return n;
}

const MAX_PEM_LINE = 128;
const PEM_BODY_LINE = /^(?:[A-Za-z0-9+/=]*|[A-Za-z-]+: .*)\r?$/;

/**
 * A block cut off before its footer is still a key: take the lines after the header that are
 * base64 (or "Proc-Type:"-style headers), stopping at the first line of anything else.
 */
function truncatedBodyEnd(text: string, bodyStart: number, limit: number): number {
  let end = bodyStart;
  let lineStart = bodyStart;
  if (text.charCodeAt(lineStart) === 13) lineStart++;
  if (text.charCodeAt(lineStart) === 10) lineStart++;
  while (lineStart < limit) {
    // PEM lines are 64 characters; a longer "line" is not key material, and the bounded search
    // keeps many headers in newline-free text linear.
    let lineEnd = lineStart;
    while (lineEnd < limit && lineEnd - lineStart <= MAX_PEM_LINE && text.charCodeAt(lineEnd) !== 10) lineEnd++;
    if (lineEnd - lineStart > MAX_PEM_LINE) break;
    const line = text.slice(lineStart, lineEnd);
    if (line.trim() === '' || !PEM_BODY_LINE.test(line)) break;
    end = lineEnd;
    lineStart = lineEnd + 1;
  }
  return end;
}
