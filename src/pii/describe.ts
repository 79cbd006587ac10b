import type { PiiType } from './types.js';

/** How an error message names a kind of data, without the data itself. */
export const PII_DESCRIPTIONS: Readonly<Record<PiiType, string>> = {
  EMAIL: 'an e-mail address',
  PHONE: 'a phone number',
  CREDIT_CARD: 'a payment card number',
  IBAN: 'a bank account number (IBAN)',
  US_SSN: 'a US social security number',
  IP_ADDRESS: 'an IP address',
  SECRET: 'a secret (password, API key, token or private key)',
};

/** "an e-mail address and a phone number" */
export function describeTypes(types: readonly PiiType[]): string {
  const names = types.map((t) => PII_DESCRIPTIONS[t]);
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1] ?? ''}`;
}
