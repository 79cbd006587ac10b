import type { Candidate, Detector } from '../types.js';
import { detectAssignments } from './secret-assignments.js';
import {
  detectAuthHeaders,
  detectAwsSecretsNearKeyIds,
  detectBundlerCredentials,
  detectUrlPasswords,
} from './secret-credentials.js';
import { detectPrivateKeyBlocks } from './secret-pem.js';
import { detectKnownTokens, joinFlyMacaroons } from './secret-tokens.js';

export { nextKeyword } from './secret-assignments.js';
export { looksFake, looksRandom, shannonEntropy } from './secret-entropy.js';
export { SECRET_CONTEXT_PRIORITY, SECRET_FORMAT_PRIORITY } from './secret-priority.js';
export { KEYWORDS } from './secret-words.js';

const SECRET_PLACEHOLDER = '[REDACTED:SECRET]';

export const detectSecrets: Detector = (text: string, _config, out: Candidate[]) => {
  const firstOwn = out.length;
  detectKnownTokens(text, out);
  joinFlyMacaroons(text, out, firstOwn);
  const keyIdEnds: number[] = [];
  for (let i = firstOwn; i < out.length; i++) {
    const c = out[i] as Candidate;
    if (/^(?:AKIA|ASIA)/.test(text.slice(c.start, c.start + 4))) keyIdEnds.push(c.end);
  }
  // A key id stored earlier is a placeholder now; it still says what the next random string is
  // (the secret written on the next line by a later edit).
  for (let at = text.indexOf(SECRET_PLACEHOLDER); at !== -1; at = text.indexOf(SECRET_PLACEHOLDER, at + 1)) {
    keyIdEnds.push(at + SECRET_PLACEHOLDER.length);
  }
  keyIdEnds.sort((a, b) => a - b);
  if (keyIdEnds.length > 0) detectAwsSecretsNearKeyIds(text, keyIdEnds, out);
  detectPrivateKeyBlocks(text, out);
  if (text.includes('://')) detectUrlPasswords(text, out);
  if (text.includes('BUNDLE_')) detectBundlerCredentials(text, out);
  detectAuthHeaders(text, out);
  detectAssignments(text, out);
};
