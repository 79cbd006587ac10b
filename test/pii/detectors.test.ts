import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';
import type { PiiType } from '../../src/pii/index.js';
import { isNationalPhoneAsGrouped } from '../../src/pii/detectors/phone.js';

/** The values `redact` reports for one type, as strings, so a test reads like the note it checks. */
function found(text: string, type?: PiiType): string[] {
  return redact(text)
    .findings.filter((f) => type === undefined || f.type === type)
    .map((f) => text.slice(f.start, f.end));
}

describe('EMAIL', () => {
  it.each([
    ['Write to jane.doe@example.com today.', 'jane.doe@example.com'],
    ['<mailto:Max.Mustermann+news@firma-schmidt.de>', 'Max.Mustermann+news@firma-schmidt.de'],
    ['メールアドレスはtaro.yamada@example.co.jpです。', 'taro.yamada@example.co.jp'],
    ['Correo: josé.garcía@correo.es.', 'josé.garcía@correo.es'],
    ['"email": "o\'brien@mail.ie"', "o'brien@mail.ie"],
  ])('finds the address in %j', (text, value) => {
    expect(found(text, 'EMAIL')).toEqual([value]);
  });

  it.each([
    'Use logo@2x.png on retina screens.',
    'npm i @types/node@20.11.5 and ping @alice in #ops',
    'git clone git@github.com:acme/repo.git',
    'decorators like @Component({ selector }) and a@b',
    'user@localhost has no domain',
    'The string "@@@@" and a lone @ sign.',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'EMAIL')).toEqual([]);
  });

  it('does not report the host of URL credentials as an address', () => {
    const text = 'postgres://app:pa@ss@db.internal:5432/app';
    expect(found(text, 'EMAIL')).toEqual([]);
    expect(found(text, 'SECRET')).toEqual(['pa@ss']);
  });
});

describe('PHONE', () => {
  it.each([
    ['Call (415) 555-0132 after six.', '(415) 555-0132'],
    ['US: +1 212 555 0199', '+1 212 555 0199'],
    ['Telefon: 030 12345678 (Büro)', '030 12345678'],
    ['Handy +49 171 2345678.', '+49 171 2345678'],
    ['Téléphone : 06 12 34 56 78', '06 12 34 56 78'],
    ['Tél. 01.23.45.67.89', '01.23.45.67.89'],
    ['Móvil: 612 345 678', '612 345 678'],
    ['電話は090-1234-5678です。', '090-1234-5678'],
    ['UK office 020 7946 0958', '020 7946 0958'],
    ['phone: 4155550132', '4155550132'],
    ['name,phone\nAnn,+44 7911 123456,2024-01-05', '+44 7911 123456'],
  ])('finds the number in %j', (text, value) => {
    expect(found(text, 'PHONE')).toEqual([value]);
  });

  it.each([
    'Deadline 2024-03-15, range 2019-2024.',
    'Invoice 4155550132 was paid.', // bare digits without a phone word
    'Order #100234567 and PO 20240315',
    'Chrome version 127.0.6429.130 broke it',
    'pi is 3.14159265358979',
    'Population 1.234.567 (2023)',
    'The form rejected 918-16-7350.',
    'Fake: +1 123 456 7890',
    'ISBN 978-3-16-148410-0',
    'Timestamp 1700000000123 in ms',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'PHONE')).toEqual([]);
  });

  it('reads national numbers with the configured regions, and of any region after a phone word', () => {
    const bare = 'see 0412 345 678 units';
    expect(redact(bare, { phoneRegions: ['AU'] }).findings.map((f) => f.type)).toEqual(['PHONE']);
    expect(redact(bare, { phoneRegions: ['US'] }).findings).toEqual([]);
    // A phone word says it is a number; nothing says whose: valid in some region is enough.
    expect(redact('Tel 0412 345 678', { phoneRegions: ['US'] }).findings.map((f) => f.type)).toEqual(['PHONE']);
  });
});

describe('CREDIT_CARD', () => {
  it.each([
    ['Visa 4111 1111 1111 1111 exp 12/27', '4111 1111 1111 1111'],
    ['card=4012888888881881;', '4012888888881881'],
    ['Amex 3782-822463-10005', '3782-822463-10005'],
    ['MC 5555 5555 5555 4444', '5555 5555 5555 4444'],
    ['Mastercard 2221 0000 0000 0009', '2221 0000 0000 0009'],
    ['Discover 6011 1111 1111 1117.', '6011 1111 1111 1117'],
    ['JCB 3530111333300000', '3530111333300000'],
  ])('finds the card in %j', (text, value) => {
    expect(found(text, 'CREDIT_CARD')).toEqual([value]);
  });

  it.each([
    'Tracking 4111 1111 1111 1112', // Luhn fails
    'Reference 9111111111111111 (no issuer starts with 9)',
    'id 41111111111111110000 is 20 digits',
    'hash 4111111111111111abc',
    'v4111.1111.1111.1111',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'CREDIT_CARD')).toEqual([]);
  });
});

describe('IBAN', () => {
  it.each([
    ['IBAN DE89 3704 0044 0532 0130 00.', 'DE89 3704 0044 0532 0130 00'],
    ['iban=GB82WEST12345698765432', 'GB82WEST12345698765432'],
    ['Compte FR14 2004 1010 0505 0001 3M02 606', 'FR14 2004 1010 0505 0001 3M02 606'],
    ['NL91ABNA0417164300 (ABN)', 'NL91ABNA0417164300'],
    ['振込先:DE89370400440532013000です', 'DE89370400440532013000'],
  ])('finds the IBAN in %j', (text, value) => {
    expect(found(text, 'IBAN')).toEqual([value]);
  });

  it.each([
    'Typo: DE89 3704 0044 0532 0130 01', // checksum fails
    'Serial AB12 3456 7890',
    'ISO code DE89 alone',
    'hash de89370400440532013000ab',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'IBAN')).toEqual([]);
  });
});

describe('US_SSN', () => {
  it.each([
    ['SSN 123-45-6789', '123-45-6789'],
    ['Her social security number is 219 09 9999.', '219 09 9999'],
    ['ssn: 078051121', '078051121'],
    ['Form W-4: 536-22-8711', '536-22-8711'],
  ])('finds the SSN in %j', (text, value) => {
    expect(found(text, 'US_SSN')).toEqual([value]);
  });

  it.each([
    'SSN 000-12-3456',
    'SSN 666-12-3456',
    'SSN 912-34-5678',
    'SSN 123-00-4567',
    'SSN 123-45-0000',
    'Order 219099999 shipped', // bare nine digits, no context
    'Part 123 45 6789 in stock', // spaced, no context
    'Date 2024-03-15',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'US_SSN')).toEqual([]);
  });
});

describe('national phone numbers as printed (isNationalPhoneAsGrouped)', () => {
  it.each([
    ['030-123456', ['DE'], true], // Berlin: 030 123456
    ['030 123456', ['US', 'DE'], true],
    ['07805-1121', ['DE'], true], // 07805 1121
    ['078-051121', ['DE', 'BE'], false], // DE prints 07805 1121, BE 078 05 11 21
    ['0780-51121', ['DE'], false],
    ['030-123456', ['US', 'GB'], false], // valid in neither
    ['089-1234567', ['DE'], true],
    ['089-123-4567', ['DE'], false], // one group too many
  ] as const)('%j in %j: %s', (raw, regions, expected) => {
    expect(isNationalPhoneAsGrouped(raw, regions)).toBe(expected);
  });
});

describe('IP_ADDRESS', () => {
  it.each([
    ['Server 10.0.0.12:8080 is down', '10.0.0.12'],
    ['ssh root@81.2.69.7', '81.2.69.7'],
    ['dns 8.8.8.8', '8.8.8.8'],
    ['server ip: 1.2.3.4', '1.2.3.4'],
    ['http://192.168.1.1/admin', '192.168.1.1'],
    ['host: 172.16.4.20', '172.16.4.20'],
    ['IPv6 2a02:8108:85a3::8a2e:370:7334 ok', '2a02:8108:85a3::8a2e:370:7334'],
    ['link-local fe80::1ff:fe23:4567:890a.', 'fe80::1ff:fe23:4567:890a'],
    ['mapped ::ffff:81.2.69.128', '::ffff:81.2.69.128'],
    ['full 2a00:1450:0000:0000:0000:ff00:0042:8329', '2a00:1450:0000:0000:0000:ff00:0042:8329'],
  ])('finds the address in %j', (text, value) => {
    expect(found(text, 'IP_ADDRESS')).toEqual([value]);
  });

  it.each([
    'Upgrade to v1.2.3.4 tonight',
    'Windows version 10.0.0.1 build',
    'image: ghcr.io/acme/api:1.5.2.45',
    'OID 1.3.6.1.4.1.311',
    'octets 256.1.1.1 and 01.02.03.04',
    'std::vector<int> and Foo::bar()',
    'meeting 12:30:45 and MAC 00:1A:2B:3C:4D:5E',
    'release 2.10.3.1 notes',
    // Addresses that identify no host: loopback, unspecified, netmasks, wildcard masks,
    // documentation and benchmarking ranges, multicast, broadcast, and single-digit quads without an address word.
    'listen on 127.0.0.1:8080 or 0.0.0.0',
    'netmask 255.255.255.0, /22 is 255.255.252.0, ACL wildcard 0.0.0.255',
    'docs use 192.0.2.10, 198.51.100.7 and 203.0.113.42',
    'bench 198.18.0.1, mcast 239.255.255.250, bcast 255.255.255.255',
    'tested on 1.2.3.4 and 4.8.0.1',
    'IPv6 loopback ::1, unspecified ::, docs 2001:db8::1 and ff02::1',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'IP_ADDRESS')).toEqual([]);
  });

  it('with ipAddresses: all, non-host addresses are reported too', () => {
    const text = 'lo 127.0.0.1 mask 255.255.255.0 doc 203.0.113.42';
    expect(redact(text, { ipAddresses: 'all' }).findings.map((f) => text.slice(f.start, f.end))).toEqual([
      '127.0.0.1',
      '255.255.255.0',
      '203.0.113.42',
    ]);
  });
});

describe('SECRET', () => {
  it.each([
    ['AWS AKIAQ3EGRT5XKZ7J2MWN', 'AKIAQ3EGRT5XKZ7J2MWN'],
    ['aws_secret_access_key = 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', 'kP8v2Qx9rT4mZ7nB1cD6fG3hJ5kL0pR2sV8wY4zA'],
    ['token ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['GITLAB=glpat-xxXXxx12345678901234', 'glpat-xxXXxx12345678901234'],
    [
      'slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
      'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    ],
    ['stripe sk_live_51HqLyjWDarjtT1zdp7dcXpuDq3', 'sk_live_51HqLyjWDarjtT1zdp7dcXpuDq3'],
    ['OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z', 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'],
    [
      'key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AA',
      'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AA',
    ],
    [
      'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ],
    ['password=hunter2', 'hunter2'],
    ['DB_PASSWORD: "S3cr3t pass!"', 'S3cr3t pass!'],
    ['my wifi password is Summer2024!', 'Summer2024!'],
    ['Das WLAN-Passwort lautet Sonne1998#.', 'Sonne1998#'],
    ['Mot de passe du Wi-Fi : cf1OLF%peNQDUXk', 'cf1OLF%peNQDUXk'],
    ['パスワード：abc123XYZです', 'abc123XYZ'],
    ['"client_secret": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"', '9f8e7d6c5b4a39281706f5e4d3c2b1a0'],
    ['Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543aa', '8f14e45fceea167a5a36dedd4bea2543aa'],
    ['https://bot:Tr0ub4dor&3@git.example.com/x.git', 'Tr0ub4dor&3'],
  ])('finds the secret in %j', (text, value) => {
    expect(found(text, 'SECRET')).toEqual([value]);
  });

  it('finds a PEM private key block from header to footer', () => {
    const pem =
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----';
    const text = `key:\n${pem}\nend`;
    expect(found(text, 'SECRET')).toEqual([pem]);
  });

  it('treats a truncated PEM block as a key too', () => {
    const text = 'pasted: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4\nabcd';
    const [value] = found(text, 'SECRET');
    expect(value?.startsWith('-----BEGIN RSA PRIVATE KEY-----')).toBe(true);
    expect(value?.endsWith('abcd')).toBe(true);
  });

  it.each([
    'Password policy: at least 12 characters.',
    'API_KEY=your-api-key-here',
    'password: ${DB_PASSWORD}',
    'token_type: Bearer, max_tokens: 4096',
    'const password = getPassword();',
    'if (password == "") throw new Error()',
    'secret: process.env.SECRET',
    'The secret to success is consistency.',
    'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
    'id 550e8400-e29b-41d4-a716-446655440000',
    '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----',
    'password: [REDACTED:SECRET]',
    'Secret Santa list is in the shared drive.',
    'The token count was 1234.',
    'パスワードは12文字以上にすること。',
  ])('finds nothing in %j', (text) => {
    expect(found(text, 'SECRET')).toEqual([]);
  });
});

describe('addresses in file names', () => {
  it('keeps a document extension out of the address', () => {
    expect(found('/memories/jane@example.com.md', 'EMAIL')).toEqual(['jane@example.com']);
    expect(found('write to ops@site.md today', 'EMAIL')).toEqual(['ops@site.md']);
  });
});
