/**
 * Inputs built to trigger catastrophic backtracking or quadratic rescans in a naive detector:
 * long runs of the characters detectors start or continue on. Shared by the linearity test and
 * the bench (which prints their times).
 */
export const ADVERSARIAL_SIZE = 1 << 20;

function repeat(unit: string, size = ADVERSARIAL_SIZE): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

/** A deterministic base64-ish string without separators (no Math.random, so runs are comparable). */
function base64Like(size: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = 2463534242;
  let out = '';
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += alphabet[(x >>> 0) % 64];
  }
  return out;
}

export const ADVERSARIAL_INPUTS: ReadonlyArray<{ name: string; make: () => string }> = [
  { name: 'digits', make: () => repeat('0123456789') },
  { name: 'spaced digits', make: () => repeat('4 ') },
  { name: 'phone-shaped groups', make: () => repeat('06 12 34 56 78 ') },
  { name: 'dashed digit groups', make: () => repeat('4111-') },
  { name: 'dotted digits', make: () => repeat('1.') },
  { name: "'@' run", make: () => repeat('@') },
  { name: "'a@' pairs", make: () => repeat('a@') },
  { name: 'a@b. chains', make: () => repeat('a@b.') },
  { name: 'local-part run then @', make: () => repeat('a', ADVERSARIAL_SIZE - 10) + '@example.com' },
  { name: 'dots', make: () => repeat('.') },
  { name: 'base64-like', make: () => base64Like(ADVERSARIAL_SIZE) },
  { name: 'colons', make: () => repeat(':') },
  { name: 'hex and colons', make: () => repeat('a1:') },
  { name: 'key words', make: () => repeat('password=token:secret ') },
  { name: 'keyword run', make: () => repeat('token') },
  { name: 'PEM headers without end', make: () => repeat('-----BEGIN PRIVATE KEY-----\n') },
  { name: 'PEM headers, no body', make: () => repeat('-----BEGIN PRIVATE KEY-----!') },
  { name: 'JWT prefixes', make: () => repeat('eyJhbGci.eyJzdWIi.') },
  { name: 'IBAN prefixes', make: () => repeat('DE89') },
  { name: 'plus signs and brackets', make: () => repeat('+(1) ') },
  { name: 'URL userinfo', make: () => repeat('https://u:p') },
  { name: 'one URL user that never ends', make: () => 'https://' + repeat('u', ADVERSARIAL_SIZE - 8) },
  { name: 'URL users without a password', make: () => repeat('https://' + 'u'.repeat(300) + ' ') },
  { name: 'Bundler key names', make: () => repeat('BUNDLE_A__') },
  { name: 'key word anchors', make: () => repeat('passenger monkey clear ') },
  { name: 'key suffix run', make: () => repeat('aKey') },
  { name: 'grouped SSN-like digits', make: () => repeat('078 05 ') },
  { name: 'Cyrillic addresses', make: () => repeat('я@я.') },
  { name: 'long token runs', make: () => repeat('xoxa-1-') },
  { name: "spelt 'at'/'dot' chains", make: () => repeat('a at b dot c dot ') },
  { name: "bracketed '[at]' runs", make: () => repeat('a[at]b(dot)') },
  { name: "'at' words", make: () => repeat('at ') },
  // The SSN table context: every cell an SSN-shaped value, and cells that alternate between two
  // delimiters of lines that hold both (each line's header lookup must not walk the block again).
  { name: 'CSV of SSN-shaped cells', make: () => 'name,ssn\n' + repeat('p,234567890\n') },
  { name: 'cells of two delimiters', make: () => 'a,b;c\n' + repeat('234567890,x;y\nx,y;234567890\n') },
  { name: 'dotted card-like groups', make: () => repeat('4111.') },
  { name: 'URL passwords without a user', make: () => repeat('redis://:p') },
];
