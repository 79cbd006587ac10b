/**
 * Path corpora for the guard, written from the public traversal payload families (dotdotpwn's
 * dot/slash encodings, PayloadsAllTheThings "Directory Traversal", OWASP path traversal, SecLists
 * LFI lists, the Windows "best fit" look-alikes) and, the other way round, names a model really
 * writes. Every attack is placed the ways a model could send it: bare, right below /memories, and
 * deeper inside the tree.
 */
export interface AttackPath {
  path: string;
  family: string;
  /**
   * True when the path must be refused by the guard itself (INVALID_PATH). A few entries are inert
   * (no layer decodes them: '??/etc/passwd'); for them only "error result, nothing read" is required.
   */
  guardRejects: boolean;
}

// dotdotpwn-style parent tokens: the same '..' spelled for every decoder a layer might run.
const DOTS = [
  '..',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '%252e%252e',
  '%25252e%25252e',
  '%c0%ae%c0%ae',
  '%c0%2e%c0%2e',
  '%c0%ee%c0%ee',
  '%e0%80%ae%e0%80%ae',
  '%f0%80%80%ae%f0%80%80%ae',
  '%f8%80%80%80%ae%f8%80%80%80%ae',
  '%fc%80%80%80%80%ae%fc%80%80%80%80%ae',
  '%25c0%25ae%25c0%25ae',
  '%uff0e%uff0e',
  '%u002e%u002e',
  '%%32%65%%32%65',
  '%ef%bc%8e%ef%bc%8e',
  '%e2%80%a5',
  '%e2%80%a4%e2%80%a4',
  '．．',
  '‥',
  '…',
  '﹒﹒',
  '․․',
  '。。',
  '..%00',
  '.%00.',
  '..%20',
  '.. ',
  ' ..',
  '. .',
  '...',
  '....',
  '..;',
  '..+',
  '.\u200b.',
  '.\u00ad.',
  '.\u0301.',
];

// The separator after the parent token: only used glued to it (a '/' alone is the path's own).
const SLASHES = [
  '\\',
  '%2f',
  '%2F',
  '%5c',
  '%5C',
  '%252f',
  '%255c',
  '%25252f',
  '%c0%af',
  '%c0%2f',
  '%c0%5c',
  '%c1%9c',
  '%c1%1c',
  '%c1%af',
  '%e0%80%af',
  '%f0%80%80%af',
  '%25c0%25af',
  '%25c1%259c',
  '%u2215',
  '%u2216',
  '%uEFC8',
  '%uF025',
  '%uff0f',
  '%%32%66',
  '%%35%63',
  '%ef%bc%8f',
  '%ef%bc%bc',
  '%e2%88%95',
  '／',
  '＼',
  '∕',
  '∖',
  '⧸',
  '﹨',
];

const TARGETS = [
  'etc/passwd',
  'windows/win.ini',
  'boot.ini',
  'root/.ssh/id_rsa',
  'proc/self/environ',
  'u/other-user/f/secret.md',
];

function parentChains(token: string, separator: string, depth: number, target: string): string {
  return `${(token + separator).repeat(depth)}${target}`;
}

export function attackPaths(): AttackPath[] {
  const out: AttackPath[] = [];
  const add = (family: string, path: string, guardRejects = true) => out.push({ path, family, guardRejects });
  const placed = (family: string, payload: string, guardRejects = true) => {
    add(family, `/memories/${payload}`, guardRejects);
    add(family, `/memories/notes/${payload}`, guardRejects);
    add(family, `/memories/a/b/c/${payload}`, guardRejects);
  };

  // 1. Every parent token followed by a real '/', at a few depths.
  for (const dots of DOTS) {
    placed(`parent-token ${dots}`, parentChains(dots, '/', 3, TARGETS[0]!));
    add(`parent-token ${dots} (bare)`, parentChains(dots, '/', 2, TARGETS[1]!));
  }
  // 2. '..' glued to every encoded separator (one segment that decodes to '../').
  for (const slash of SLASHES) {
    placed(`encoded-separator ${slash}`, parentChains('..', slash, 4, 'etc/passwd'));
  }
  // 3. Cross products of a sample of encoded dots and separators (dotdotpwn's core loop).
  const someDots = ['%2e%2e', '%252e%252e', '%c0%ae%c0%ae', '%uff0e%uff0e', '．．', '‥'];
  const someSlashes = ['%2f', '%5c', '%252f', '%c0%af', '%u2215', '／'];
  for (const dots of someDots)
    for (const slash of someSlashes) placed('encoded dots+separator', parentChains(dots, slash, 3, 'etc/passwd'));

  // 4. Nested sequences that survive a one-pass strip of '../'.
  for (const nested of [
    '....//',
    '...//',
    '..././',
    '....\\/',
    '....\\\\',
    '..../',
    '.../.../',
    '...\\.\\',
    '..\\/',
    '..//',
  ]) {
    placed('nested/stripped', `${nested.repeat(3)}etc/passwd`);
  }
  // 5. Plain '..' segments, also when they stay inside the root.
  for (const p of [
    '/memories/..',
    '/memories/../',
    '/memories/../memories/x',
    '/memories/a/../b',
    '/memories/a/..',
    '/memories/./../x',
    '/memories/a/b/../../../..',
  ])
    add('dot-dot inside root', p);
  for (const t of TARGETS) for (const depth of [1, 2, 4, 8]) add('dot-dot', `/memories/${'../'.repeat(depth)}${t}`);
  for (const t of TARGETS) add('dot-dot backslash', `/memories/${'..\\'.repeat(4)}${t.replace(/\//g, '\\')}`);

  // 6. NUL, control characters and invisible formatting.
  for (const c of [
    '\u0000',
    '\u0001',
    '\t',
    '\n',
    '\r',
    '\u001b',
    '\u007f',
    '\u0085',
    '\u2028',
    '\u2029',
    '\u202e',
    '\u2066',
    '\ufeff',
  ]) {
    add('control', `/memories/notes${c}.md`);
    add('control', `/memories/..${c}/etc/passwd`);
  }
  for (const e of ['%00', '%0a', '%0d', '%09', '%1b', '%7f', '%2500', '%c2%85', '%e2%80%ae']) {
    add('encoded control', `/memories/notes${e}.md`);
    add('encoded control', `/memories/../../etc/passwd${e}.md`);
  }

  // 7. Prefix confusion and roots that are not /memories.
  for (const p of [
    '/memories_evil',
    '/memories_evil/x',
    '/memoriesX',
    '/memories-backup/x',
    '/memories.bak/x',
    '//memories',
    '//memories/x',
    '///memories/x',
    '/Memories/x',
    '/MEMORIES',
    'memories/x',
    'memories',
    ' /memories',
    '/memories ',
    '/memories\t',
    '/./memories/x',
    '/../memories/x',
    '/%6demories/x',
    '/memories%2f..%2fetc%2fpasswd',
    '/memories%2fnotes',
    '/memories%00/x',
    '/memories\\..\\x',
    '/ｍｅｍｏｒｉｅｓ/x',
    '／memories/x',
    '',
    '/',
    '.',
    '..',
    '/etc/passwd',
    '/proc/self/environ',
    '/var/log/auth.log',
    '/root/.ssh/id_rsa',
    '~/.ssh/id_rsa',
    '~root/.bashrc',
    'etc/passwd',
    '%2fetc%2fpasswd',
    '../memories/x',
    '../../../../etc/passwd',
    '..\\..\\..\\windows\\win.ini',
  ])
    add('outside root', p);

  // 8. Drive letters, UNC, device paths, URL schemes and stream wrappers.
  for (const p of [
    'C:\\windows\\win.ini',
    'C:/windows/win.ini',
    'c:',
    'C:..\\x',
    '\\\\server\\share\\x',
    '\\\\?\\C:\\windows\\win.ini',
    '\\\\.\\pipe\\x',
    '\\\\localhost\\c$\\windows\\win.ini',
    '//server/share/x',
    'file:///etc/passwd',
    'file://localhost/etc/passwd',
    'file:/etc/passwd',
    'http://127.0.0.1/memories/x',
    'https://evil.example/memories/x',
    'smb://server/share',
    's3://bucket/u/x',
    'php://filter/convert.base64-encode/resource=/etc/passwd',
    'data:text/plain,hello',
    'zip://archive.zip#x',
    'phar://x.phar/y',
    'expect://id',
  ])
    add('drive/UNC/scheme (bare)', p);
  for (const p of [
    'C:',
    'C:/windows/win.ini',
    'c:windows',
    'D:..',
    'C%3a/windows',
    'file:/etc/passwd',
    'file:',
    'http:/127.0.0.1',
    'https:',
    'php:filter/resource=x',
    'data:text/plain,x',
    'zip:archive.zip',
    'phar:x',
    'expect:id',
    'glob:x',
  ])
    placed('drive/scheme inside', p);

  // 9. Segments of dots and spaces, and dots hidden before a name end (';', '?', '#', ':').
  for (const p of [
    '...',
    '....',
    '. .',
    '.. ',
    ' ..',
    '. ',
    ' .',
    '.%20.',
    '..%20',
    '%20..',
    '.\u00a0.',
    '.\u3000.',
    '..;',
    '..;foo',
    '..?',
    '..#x',
    '..:',
    '..::$INDEX_ALLOCATION',
    '...::$INDEX_ALLOCATION',
    '.::$DATA',
  ]) {
    placed('dots and spaces', `${p}/etc/passwd`);
  }
  // 10. Empty segments.
  for (const p of [
    '/memories//x',
    '/memories///',
    '/memories//',
    '/memories/a//b',
    '/memories/a///',
    '/memories//../x',
  ])
    add('empty segment', p);
  // 11. Lengths.
  add('too long', `/memories/${'a'.repeat(256)}`);
  add('too long', `/memories/${'é'.repeat(128)}`);
  add('too long', `/memories/${'日'.repeat(86)}`);
  add('too long', `/memories/${'a/'.repeat(2100)}x`);
  add('too long', `/memories/${'x'.repeat(5000)}`);
  add('too long', `/memories/${'../'.repeat(2000)}etc/passwd`);
  // 12. The reserved bookkeeping directory, in every spelling.
  for (const p of [
    '.memvault',
    '.memvault/',
    '.memvault/renames/x',
    '.MEMVAULT',
    '%2ememvault',
    '%2Ememvault/x',
    './.memvault',
    '．memvault',
  ])
    add('reserved', `/memories/${p}`);
  // 13. Windows device names.
  for (const p of ['CON', 'con.txt', 'NUL', 'nul.md', 'AUX', 'PRN.log', 'COM1', 'LPT1.txt', 'CONIN$', 'ＣＯＮ'])
    placed('device name', p);
  // 14. Ill-formed Unicode.
  for (const p of ['\ud800', '\udfff', 'a\ud800b', '\udc00..']) add('ill-formed unicode', `/memories/${p}`);
  // 15. Look-alike separators in otherwise ordinary names (would split the name in two below).
  for (const p of [
    'a／b',
    'a＼b',
    'a∕b',
    'a∖b',
    'a⧸b',
    'a﹨b',
    'a%2fb',
    'a%5cb',
    'a%252fb',
    '..¥..¥windows¥win.ini',
    '..₩..₩x',
    '¥..',
    '℀',
    '%ef%bc%8f',
  ])
    add('look-alike separator', `/memories/${p}`);

  // 16. Invalid hex after '%', as IIS's decoder reads it (any character a digit: '%bg%qf' is %c0%af);
  //     and inert spellings no decoder understands: no guard rule, but still only ever an error.
  for (const p of [
    '..%c0%9v',
    '%c0%qf',
    '%bg%qf',
    '..%bg%qf..',
    '%c1%pc',
    '%1u%1u',
    '%1u%1u%1vetc%1vpasswd',
    '%u001u%u001u',
  ])
    placed('unchecked hex digits', p);
  for (const p of ['?./?./etc/passwd', '??/etc/passwd']) placed('inert', p, false);
  // 17. Text escapes of '.', '/', '\' that decoders of traversal payload lists read (dotdotpwn's '0x2e').
  for (const p of [
    '0x2e0x2e/0x2e0x2e/etc/passwd',
    '0X2E0X2E/etc/passwd',
    '0x2e0x2e0x2fetc0x2fpasswd',
    '&#46;&#46;/etc/passwd',
    '&#x2e;&#x2e;&#x2f;etc',
    '%U002E%U002E/etc/passwd',
    '%e0%80%2e%e0%80%2e/etc/passwd',
  ])
    placed('text escapes', p);
  // 18. The reserved directory as Windows and URL layers fold it, and names of invisible characters only.
  for (const p of [
    '.memvault.',
    '.memvault ',
    '.memvault;x',
    '.memvault?x',
    '.memvault#x',
    '.memvault::$DATA',
    '.memvault%3bx',
    '.memvault%20',
    'MEMVAU~1',
  ])
    add('reserved look-alike', `/memories/${p}/renames/x`);
  for (const p of ['\u200b', '\u2060\u200c', '\u3164', '\u2800', '%e2%80%8b']) placed('invisible name', p);

  return out;
}

/** Names a model writes; none of them may be refused as an invalid path. */
export function legitimatePaths(): string[] {
  const names = [
    'notes.md',
    'README',
    'todo.txt',
    'Project Plan 2024.md',
    'meeting notes (draft).md',
    'notes..v2.txt',
    'v1.2.3.md',
    'archive.tar.gz',
    '.hidden',
    '.config.json',
    '..and more.md',
    '...etc notes.md',
    'etc.',
    'wait...',
    '100%.txt',
    '100%',
    'my%20notes.md',
    '50%off.md',
    '%zz.md',
    '%.md',
    'a%b.md',
    '10:30 standup.md',
    'Meeting: follow-ups.md',
    'TODO: call back.md',
    'ratio 3:2.md',
    'c++ tips.md',
    'a+b=c.md',
    'C# notes.md',
    'issue #42.md',
    'user@example notes.md',
    'what?.md',
    'why not!.md',
    'costs $100.md',
    'price ¥100.md',
    '¥.md',
    '₩5000.md',
    '½ cup recipe.md',
    '~draft.md',
    'draft~.md',
    'a_b-c.md',
    'semi;colon.md',
    "it's mine.md",
    'quote "x".md',
    'brackets [1].md',
    'braces {x}.md',
    'angle <x>.md',
    'pipe | x.md',
    'star *.md',
    'caret ^.md',
    'backtick `x`.md',
    'equals=1.md',
    'comma, list.md',
    'two  spaces.md',
    ' leading space.md',
    'trailing space ',
    'tab-less name.md',
    'café.md',
    'cafe\u0301.md',
    'naïve résumé.md',
    'Ångström.md',
    'Straße.md',
    'Ελληνικά.md',
    'русский.md',
    'українська.md',
    'עברית.md',
    'العربية.md',
    'فارسی\u200cنامه.md',
    'हिन्दी.md',
    'ไทย.md',
    '한국어.md',
    '한국어'.normalize('NFD') + '.md',
    '日本語のメモ.md',
    'メモ。md',
    '中文笔记.md',
    '笔记…草稿.md',
    'Ideas… later.md',
    'see ‥ there.md',
    'emoji 🎉.md',
    '👨‍👩‍👧 family.md',
    '🏳️‍🌈.md',
    'ｆｕｌｌｗｉｄｔｈ.md',
    'Ⅻ chapter.md',
    '①②③.md',
    'x².md',
    'ﬁle.md',
    'mixed Ünïcödé ñ.md',
    'CONFIG.md',
    'console.md',
    'auxiliary.md',
    'nullable.md',
    'com.example.md',
    'http.md',
    'https notes.md',
    'file.md',
    'data.json',
    'data 2024.md',
    'php notes.md',
    'C.md',
    'c',
    'a',
    'Z',
    '0',
    '-',
    '_',
    '~',
    '$',
    'node_modules',
    'index.html',
    'image.png',
    'photo.JPG',
    '2024-01-01.md',
    '2024-01-01T10:30:00Z.log',
    'a'.repeat(255),
    '日'.repeat(85),
    'é'.repeat(127),
  ];
  const dirs = [
    '',
    'projects/',
    'projects/alpha/',
    'people/Zoë/',
    'journal/2024/01/',
    'Ünïcode dir/',
    '.archive/',
    'a/b/c/d/e/f/g/h/',
  ];
  const out: string[] = [
    '/memories',
    '/memories/',
    '/memories/.',
    '/memories/./notes.md',
    '/memories/projects/',
    '/memories/projects/./alpha/',
  ];
  for (const dir of dirs) for (const name of names) out.push(`/memories/${dir}${name}`);
  // Deep but within limits: 100 levels of a 30-byte name (3.1 KB).
  out.push(
    `/memories/${Array.from({ length: 100 }, (_, i) => `level-${String(i).padStart(3, '0')}-abcdefghijklmnop`).join('/')}`,
  );
  return out;
}
