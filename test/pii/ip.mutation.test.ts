/**
 * The IP detector's edges, for mutation testing (scripts/mutation/targets.mjs, pii-ip):
 * octet bounds and what may touch an address, the words that make a dotted quad an address or a
 * version, image tags, the address ranges that identify no host, and IPv6 forms.
 */
import { describe, expect, it } from 'vitest';
import { nonHostIpv4 } from '../../src/pii/detectors/ip.js';
import { redact } from '../../src/pii/index.js';

const ips = (text: string, all = false): string[] =>
  redact(text, all ? { ipAddresses: 'all' } : {})
    .findings.filter((f) => f.type === 'IP_ADDRESS')
    .map((f) => text.slice(f.start, f.end));

describe('IPv4', () => {
  it.each([
    ['ip 10.1.2.3', ['10.1.2.3']],
    ['ip 223.254.253.249', ['223.254.253.249']],
    ['ip 249.200.199.100', []], // 224/3 is reserved
    ['ip 100.200.250.199', ['100.200.250.199']],
    ['ip 256.1.2.3', []],
    ['ip 10.1.2.256', []],
    ['ip 01.2.3.4', []],
    ['ip 10.01.2.3', []],
    ['ip 10.1.2.3.', ['10.1.2.3']],
    ['ip 10.1.2.3-', ['10.1.2.3']],
    ['ip 10.1.2.3, 10.1.2.4', ['10.1.2.3', '10.1.2.4']],
  ])('%s', (text, expected) => {
    expect(ips(text)).toEqual(expected);
  });

  it.each(['a', '.', '-', '_'])('an address glued after %s is part of something else', (glue) => {
    expect(ips(`ip ${glue}10.1.2.3`)).toEqual([]);
  });

  it.each(['a', '_', '.4', '-b'])('an address glued before %s is part of something else', (glue) => {
    expect(ips(`ip 10.1.2.3${glue}`)).toEqual([]);
  });

  it.each([
    'ip',
    'ipv4',
    'ips',
    'IP',
    'addr',
    'address',
    'adresse',
    'dirección',
    'indirizzo',
    'host',
    'hostname',
    'server',
    'serveur',
    'src',
    'dst',
    'source',
    'peer',
  ])('a single-digit quad after %s is an address', (word) => {
    expect(ips(`${word} 1.2.3.4`)).toEqual(['1.2.3.4']);
  });

  it.each([
    'gateway',
    'gw',
    'dns',
    'nameserver',
    'resolver',
    'proxy',
    'upstream',
    'listen',
    'bind',
    'client',
    'remote',
    'from',
    'connect',
    'connected',
    'connecting',
    'connected to',
    'connect to',
    'ssh',
    'ping',
    'curl',
    'nslookup',
    'dig',
  ])('a single-digit quad after %s is an address', (word) => {
    expect(ips(`${word} 1.2.3.4`)).toEqual(['1.2.3.4']);
  });

  it('after an address word: up to four of space : = @ quote bracket; @ and // alone', () => {
    for (const sep of [':', '=', ': ', ' "', "'", '(', '=@', ' :=('])
      expect(ips(`host${sep}1.2.3.4`), sep).toEqual(['1.2.3.4']);
    expect(ips('host      1.2.3.4')).toEqual([]);
    expect(ips('ssh root@1.2.3.4')).toEqual(['1.2.3.4']);
    expect(ips('http://1.2.3.4')).toEqual(['1.2.3.4']);
    expect(ips('http:/1.2.3.4')).toEqual([]);
  });

  it.each(['at', 'xip', 'hosts', 'iptables', 'note', 'ipx'])(
    'a single-digit quad after %s is a version or a number',
    (word) => {
      expect(ips(`${word} 1.2.3.4`)).toEqual([]);
      // Every well-formed quad in 'all' mode.
      expect(ips(`${word} 1.2.3.4`, true)).toEqual(['1.2.3.4']);
    },
  );

  it('a quad with any part of two digits needs no word', () => {
    expect(ips('at 10.2.3.4')).toEqual(['10.2.3.4']);
    expect(ips('at 1.2.3.40')).toEqual(['1.2.3.40']);
  });

  it.each([
    'version',
    'v',
    'V',
    'ver',
    'vers',
    'versión',
    'versione',
    'versie',
    'release',
    'build',
    'rev',
    'revision',
    'firmware',
    'fw',
    'update',
    'patch',
    'edition',
    'sdk',
    'api level',
    'os',
    'ios',
    'android',
    'chrome',
    'chromium',
    'firefox',
    'safari',
    'edge',
    'node',
    'python',
    'java',
    'kernel',
    'section',
    'chapter',
    'abschnitt',
    'kapitel',
  ])('after %s a dotted quad is a version, in either mode', (word) => {
    expect(ips(`${word} 10.1.2.3`)).toEqual([]);
    expect(ips(`${word} 10.1.2.3`, true)).toEqual([]);
  });

  it('the version words may be followed by id, number, was, is..., a colon or an equals sign, or stand glued', () => {
    for (const text of [
      'build id was 10.1.2.3',
      'version number: 10.1.2.3',
      'release is now 10.1.2.3',
      'firmware: 10.1.2.3',
      'version=10.1.2.3',
      'v10.1.2.3',
      'バージョン10.1.2.3',
      'バージョン 10.1.2.3',
      'バージョン\t10.1.2.3',
      'バージョン: 10.1.2.3',
      'バージョン：10.1.2.3',
      'バージョン = 10.1.2.3',
      'Version No. 10.1.2.3',
    ])
      expect(ips(text), text).toEqual([]);
    // Another katakana word, or the version word and a colon in the wrong order, is no version word.
    for (const text of ['サーバー 10.1.2.3', 'バージョンは 10.1.2.3', 'バージョン :: 10.1.2.3'])
      expect(ips(text), text).toEqual(['10.1.2.3']);
    for (const text of ['xversion 10.1.2.3', 'nodes 10.1.2.3', 'version x 10.1.2.3', 'edgy 10.1.2.3'])
      expect(ips(text), text).toEqual(['10.1.2.3']);
  });

  it('an image tag glued by a colon is a version; an address word before the colon makes it an address', () => {
    for (const text of ['ghcr.io/acme/api:10.5.2.45', 'api:10.5.2.45', 'my-image:10.5.2.45', 'a.b/c-d_e:10.5.2.45'])
      expect(ips(text), text).toEqual([]);
    for (const word of [
      'host',
      'ip',
      'addr',
      'address',
      'server',
      'src',
      'dst',
      'from',
      'to',
      'peer',
      'gateway',
      'gw',
      'dns',
      'nameserver',
      'proxy',
      'upstream',
      'listen',
      'bind',
      'my-host',
      'x.proxy',
      'HOST',
    ])
      expect(ips(`${word}:10.5.2.45`), word).toEqual(['10.5.2.45']);
    // No letter before the colon: not a tag.
    expect(ips('12:10.5.2.45')).toEqual(['10.5.2.45']);
    expect(ips('see: 10.5.2.45')).toEqual(['10.5.2.45']);
  });
});

describe('nonHostIpv4: the ranges that identify no host', () => {
  it.each([
    ['0.1.2.3', true],
    ['1.1.2.3', false],
    ['126.1.2.3', false],
    ['127.0.0.1', true],
    ['128.1.2.3', false],
    ['223.255.255.254', false],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['192.0.2.5', true],
    ['192.0.3.5', false],
    ['192.1.2.5', false],
    ['193.0.2.5', false],
    ['198.51.100.5', true],
    ['198.51.101.5', false],
    ['198.52.100.5', false],
    ['199.51.100.5', false],
    ['203.0.113.5', true],
    ['203.0.114.5', false],
    ['203.1.113.5', false],
    ['204.0.113.5', false],
    ['198.18.0.5', true],
    ['198.19.255.5', true],
    ['198.17.0.5', false],
    ['198.20.0.5', false],
    ['197.18.0.5', false],
    ['255.255.255.0', true],
    ['128.0.0.0', true], // netmasks (ones then zeros) below 224
    ['192.0.0.0', true],
    ['128.0.0.1', false],
    ['192.0.0.1', false],
    ['160.0.0.0', false],
    ['128.1.0.0', false],
    ['1.255.255.255', true], // a wildcard mask (zeros then ones)
    ['1.255.255.254', false],
    ['2.255.255.255', false],
    ['63.255.255.255', true],
    ['64.255.255.255', false],
    ['3.255.255.255', true],
    ['1.255.255.127', false],
  ] as const)('%s: %s', (address, expected) => {
    expect(nonHostIpv4(address.split('.').map(Number))).toBe(expected);
  });

  it('they are reported only in "all" mode', () => {
    for (const address of ['127.0.0.1', '192.0.2.5', '198.18.0.5', '255.255.255.0', '224.0.0.1']) {
      expect(ips(`ip ${address}`), address).toEqual([]);
      expect(ips(`ip ${address}`, true), address).toEqual([address]);
    }
  });
});

describe('IPv6', () => {
  it.each([
    ['ip 2001:4860:4860::8888', ['2001:4860:4860::8888']],
    ['ip 2001:4860:4860:0:0:0:0:8888', ['2001:4860:4860:0:0:0:0:8888']],
    ['ip 2001:4860:4860:0:0:0:8888', []],
    ['ip fe80::1', ['fe80::1']],
    ['ip fe80::1.', ['fe80::1']],
    ['ip fe80::1..', ['fe80::1']],
    ['ip fe80::1:', []],
    ['ip x2001:4860::8888', []],
    ['ip 2001:4860::8888x', []],
    ['ip :2001:4860::8888', []],
    ['ip ::ffff:10.1.2.3', ['::ffff:10.1.2.3']],
    ['ip 1:2:3:4:5:6:7:8', ['1:2:3:4:5:6:7:8']],
    ['ip 1:2:3:4:5:6:7', []],
    ['ip 1:2:3:4:5:6:1.2.3.4', ['1:2:3:4:5:6:1.2.3.4']],
    ['ip 1111:2222:3333:4444:5555:6666:123.123.123.123', ['1111:2222:3333:4444:5555:6666:123.123.123.123']],
    ['ip 0000:0000:0000:0000:0000:ffff:123.123.123.123', ['0000:0000:0000:0000:0000:ffff:123.123.123.123']],
    ['ip 01111:2222:3333:4444:5555:6666:123.123.123.123', ['123.123.123.123']], // 46 characters: longer than any IPv6 address; its IPv4 tail is one
    ['ip 0:0:0:0:0:0:0:2', ['0:0:0:0:0:0:0:2']],
    ['ip 1:0:0:0:0:0:0:1', ['1:0:0:0:0:0:0:1']],
    ['ip 2001:db9::1', ['2001:db9::1']],
    ['ip ::1a', ['::1a']],
    ['ip 1::', []],
    ['ip ::a', []],
    ['ip 12:34:56', []],
    ['std::map a::b', []],
    ['ip 2001:4860::8888 and fe80::2', ['2001:4860::8888', 'fe80::2']],
  ] as const)('%s', (text, expected) => {
    expect(ips(text)).toEqual(expected);
  });

  it.each([
    '::1',
    '0:0:0:0:0:0:0:1',
    '0000:0:0:0:0:0:0:0001',
    '2001:db8::1',
    '2001:0db8::1',
    '2001:DB8::1',
    'ff02::1',
    'FF02::1',
  ])('%s identifies no host: reported only in "all" mode', (address) => {
    expect(ips(`ip ${address}`)).toEqual([]);
    expect(ips(`ip ${address}`, true)).toEqual([address]);
  });

  it('the unspecified address alone, in "all" mode, between spaces, =, brackets, commas or a line end', () => {
    for (const text of ['listen on ::', 'src=::', '(::)', '[::]', ':: ,', 'x ::\nnext', '::'])
      expect(ips(text, true), JSON.stringify(text)).toEqual(['::']);
    for (const text of ['a:: b', 'x ::x', 'x ::-', 'x-::', 'std::', 'x :::'])
      expect(ips(text, true), JSON.stringify(text)).toEqual([]);
    expect(ips('listen on ::')).toEqual([]);
  });
});
