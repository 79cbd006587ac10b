/**
 * Coverage added for the detectors' known gaps and the public-data misses: SSNs in their spaced and dotted
 * forms, internationalised e-mail addresses, the unspecified IPv6 address in 'all' mode, and
 * credential families (Bundler host credentials, UUID keys, `*_KEY` config names), with the
 * neighbours that must stay unreported.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';
import type { PiiType, RedactOptions } from '../../src/pii/types.js';

function found(text: string, type: PiiType, options?: RedactOptions): string[] {
  return redact(text, options)
    .findings.filter((f) => f.type === type)
    .map((f) => text.slice(f.start, f.end));
}

describe('US_SSN', () => {
  it.each([
    ['078-05-1123', '078-05-1123'],
    ['078 05 1123', '078 05 1123'],
    ['078.05.1123', '078.05.1123'],
    ['abc 078 05 1123 abc', '078 05 1123'],
    ['Her number on file: 219 09 9999.', '219 09 9999'],
    ['SSN 078051121', '078051121'],
    // Nine bare digits and Presidio's 3-6 grouping on their own, when nothing before says what else they are.
    ['078051121', '078051121'],
    ['moved to 219099998 last year', '219099998'],
    ['536-904399', '536-904399'],
    ['SSN 078-051121', '078-051121'],
    ['SSN 07805-1121', '07805-1121'],
  ])('reports %j', (text, value) => {
    expect(found(text, 'US_SSN')).toEqual([value]);
  });

  it.each([
    'Order 078051121', // nine bare digits after a word that makes them another number
    'invoice #636521579',
    'Kundennummer 100234567',
    '注文番号 #141658830',
    'Mobil 612345678',
    'passport 531234567',
    'routing 121000358',
    '078051120', // voided (the 1938 wallet insert), as Presidio rules it out
    '123456789',
    '111111111',
    '98765432 1',
    'CA 94107-1234', // XXXXX-XXXX is the ZIP+4 shape: it needs an SSN word
    'Berlin 030-123456', // a 3-6 form that is a valid national phone number is one
    'part 123 45 6789',
    'order no. 219 09 9999',
    'Tel. 078 05 1123',
    'Kontakt 030 12 3456',
    '666 12 3456',
    '912.34.5678',
    '078 00 1123',
    '078.05.0000',
    'v 123.45.6789',
    '1.078.05.1123',
    '078 05 1123 45',
  ])('does not report %j', (text) => {
    expect(found(text, 'US_SSN')).toEqual([]);
  });

  // XXX-XXXXXX is both Presidio's SSN form and how some regions print phone numbers: a phone
  // number only when a configured region prints these digits with just these groups.
  it.each([
    ['078-051121', 'DE prints it 07805 1121, BE 078 05 11 21'],
    ['Her form says 078-051121.', 'in a sentence'],
    ['536-904399 and 219-099998', 'two of them'],
  ])('reports %j as an SSN, not a phone (%s)', (text) => {
    const result = redact(text).findings;
    expect(result.length).toBeGreaterThan(0);
    expect(result.every((f) => f.type === 'US_SSN')).toBe(true);
  });

  it.each([
    ['Berlin 030-123456', '030-123456'],
    ['München 089-123456', '089-123456'],
    ['Ancona 071-234567', '071-234567'],
  ])('reports %j, printed as its region prints phone numbers, as a phone', (text, value) => {
    expect(found(text, 'US_SSN')).toEqual([]);
    expect(found(text, 'PHONE')).toEqual([value]);
  });
});

describe('EMAIL, internationalised', () => {
  it.each([
    ['user@xn--80ak6aa92e.com', 'user@xn--80ak6aa92e.com'],
    ['a@xn--d1acufc.xn--p1ai', 'a@xn--d1acufc.xn--p1ai'],
    ['пишите на user@пример.рф, спасибо', 'user@пример.рф'],
    ['ivan@почта.рус', 'ivan@почта.рус'],
    ['Γράψτε στο info@παράδειγμα.ελ.', 'info@παράδειγμα.ελ'],
    ['メールはtaro@example.jpです', 'taro@example.jp'],
  ])('reports %j', (text, value) => {
    expect(found(text, 'EMAIL')).toEqual([value]);
  });

  it.each(['my email is info@presidio.', 'logo@2x.png', 'x@host.рфcom', 'a@b.c'])('does not report %j', (text) => {
    expect(found(text, 'EMAIL')).toEqual([]);
  });
});

describe('IP_ADDRESS, the unspecified address', () => {
  it('"::" alone is reported with ipAddresses: all, never by default or in code', () => {
    expect(found('src=:: dst=::1', 'IP_ADDRESS', { ipAddresses: 'all' })).toEqual(['::', '::1']);
    expect(found('Use local ipv6 ::', 'IP_ADDRESS', { ipAddresses: 'all' })).toEqual(['::']);
    expect(found('src=:: dst=::1', 'IP_ADDRESS')).toEqual([]);
    expect(found('std::vector<int> and Foo::bar()', 'IP_ADDRESS', { ipAddresses: 'all' })).toEqual([]);
  });
});

describe('SECRET, credential families', () => {
  it.each([
    ['export BUNDLE_ENTERPRISE__CONTRIBSYS__COM=cafe12be:dead34ef && echo ok', 'cafe12be:dead34ef'],
    ['BUNDLE_GEMS__CONTRIBSYS__COM: "cafebabe:deadbeef"', 'cafebabe:deadbeef'],
    [
      'BUNDLE_RUBYGEMS__PKG__GITHUB__COM: octocat:ghs_x8Kd92mLqP0aZr7TbN4cVw1yE6uJ3hGf5sQo',
      'octocat:ghs_x8Kd92mLqP0aZr7TbN4cVw1yE6uJ3hGf5sQo',
    ],
    ['const HEROKU_KEY = "12345678-ABCD-ABCD-ABCD-1234567890AB"', '12345678-ABCD-ABCD-ABCD-1234567890AB'],
    ['snyk_token: "0f3b9a2e-5c7d-4e1f-8a6b-9d2c4e7f1a3b"', '0f3b9a2e-5c7d-4e1f-8a6b-9d2c4e7f1a3b'],
    ['hubspotKey: "f3a9c0e2-71b4-4d2a-9e8f-0c5b6a7d8e91"', 'f3a9c0e2-71b4-4d2a-9e8f-0c5b6a7d8e91'],
    ['STRIPE_KEY=9fK2mQ7xLp4Rt8Vb3Nw6Zc1H', '9fK2mQ7xLp4Rt8Vb3Nw6Zc1H'],
    [
      'slack_token: "xoxa-2-511111111-31111111111-3111111111111-e039d02840a0b9379c"',
      'xoxa-2-511111111-31111111111-3111111111111-e039d02840a0b9379c',
    ],
    // A key named after the service, with no key word (gitleaks' Sourcegraph and Sumo Logic rules).
    ['sourcegraph: 6d2FabeB6ADd229Bc199FabA28fD3efb57dF0bD3', '6d2FabeB6ADd229Bc199FabA28fD3efb57dF0bD3'],
    ['SOURCEGRAPH_URL_TOKEN = "Xy7Lq2Vb9Nf4Rt6Zc1Hm8Ks3"', 'Xy7Lq2Vb9Nf4Rt6Zc1Hm8Ks3'],
    ['sumologic.accessId = "su9OL59biWiJu7"', 'su9OL59biWiJu7'],
    ['sumo_access_id: suK3m9QpL2x7Vb', 'suK3m9QpL2x7Vb'],
    // A secret key spelled in one lowercase word is still one ("secretkey", "apikeys").
    ['secretkey=Qm7Vx2Lp9Rt4Nb8Zk3Hc', 'Qm7Vx2Lp9Rt4Nb8Zk3Hc'],
    ['apikeys: Qm7Vx2Lp9Rt4Nb8Zk3Hc', 'Qm7Vx2Lp9Rt4Nb8Zk3Hc'],
  ])('reports %j', (text, value) => {
    expect(found(text, 'SECRET')).toEqual([value]);
  });

  it.each([
    'BUNDLE_PATH: vendor/bundle',
    'BUNDLE_RUBYGEMS__PKG__GITHUB__COM: "${USER}:${TOKEN}"',
    'ssh_public_key = "AAAAB3NzaC1yc2EAAAADAQABAAABgQC7x9"',
    'VAPID_PUB_KEY=BEl62iUYgUivxIkv69yViEuiBIa40HI80NM9f8HnKJU',
    'cache_key = user_1234',
    'the monkey: a cute one',
    '-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----',
    '-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----',
    'sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa',
    // A key word that begins another word is not a key name.
    'minisat-master-keying:x64-uwp=fail',
    'tokenizer: bert-base-uncased-v2x9',
    'secretary: Jo4nSm1th-Office22',
    'keyboard = Logitech-MX-Keys-S-2023',
    // An access id that is a UUID is an identifier (report_access_id), and sumOf… is not Sumo Logic.
    'report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d',
    'sumOfExposures = 3Kof2VffNQ0QgYIhXUPJosVlCaQKm2hfpWE6F1fT9YGY74blQBIPsrkCcf1TwKE5;',
    // A value shown cut off is documentation of a token, not the token.
    'export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJzaWduSW5BZGRyZXNzIjoiaHR0cHM6...',
    'api_key: Qm7Vx2Lp9Rt4Nb8Zk3Hc…',
  ])('does not report %j', (text) => {
    expect(found(text, 'SECRET')).toEqual([]);
  });

  it('a Fly.io token of several macaroons joined by commas is one secret', () => {
    const mac = (c: string) =>
      `fm2_${c.repeat(30)}lJPECAAAAAAAAyZtxBD1hSZ7L5leXsj64ZbDlkm/wrVodHRwczovL2FwaS5mbHkuaW8vdjGWAJLOAAwMDB8Lk7lod`;
    const token = `${mac('Ab3')},${mac('Xy7')},${mac('Qm9')}`;
    expect(found(`FLY_API_TOKEN: FlyV1 ${token}`, 'SECRET')).toEqual([token]);
    // Two tokens in a list stay two.
    expect(found(`a: ${mac('Ab3')}, b: ${mac('Xy7')}`, 'SECRET')).toHaveLength(2);
  });
});
