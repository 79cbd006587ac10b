/** Helpers on canonical memory paths (as produced by the path guard), and the limits of a path. */
export const MEMORY_ROOT = '/memories';

/**
 * The limits a path meets, in one place for the docs to cite (docs/paths-and-quotas.md, "Limits").
 * The path guard enforces the first two; the last two are what the store's key limit
 * (MAX_STORE_KEY_BYTES, 1,024 bytes) leaves of a path once it is encrypted (the default), on a store
 * whose keys have no prefix (memory, file, an S3 bucket of its own): each name takes
 * ⌈(16 + bytes) · 4 / 3⌉ key characters, and every file's key leaves room for its versions' keys,
 * history on or off. test/vault/path-limits.test.ts finds each from the code, on every store.
 */
export const MAX_PATH_BYTES = 4096;
/** The longest name, in bytes of UTF-8 after NFC. */
export const MAX_SEGMENT_BYTES = 255;
/** The deepest path of one-byte names that can be stored (`/memories/a/a/.../a`). */
export const STORABLE_LEVELS_OF_ONE_BYTE_NAMES = 40;
/** How many names of MAX_SEGMENT_BYTES one storable path can hold. */
export const STORABLE_LEVELS_OF_LONGEST_NAMES = 2;

/** Segments below the root: '/memories' -> [], '/memories/a/b' -> ['a', 'b']. */
export function pathSegments(path: string): string[] {
  if (path === MEMORY_ROOT) return [];
  return path.slice(MEMORY_ROOT.length + 1).split('/');
}

/** True when `path` is `dir` itself or lies below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === MEMORY_ROOT ? `${MEMORY_ROOT}/` : `${dir}/`);
}

/** Proper ancestors of a path below the root, nearest last: '/memories/a/b/c' -> ['/memories/a', '/memories/a/b']. */
export function ancestorsOf(path: string): string[] {
  const segments = pathSegments(path);
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) out.push(`${MEMORY_ROOT}/${segments.slice(0, i).join('/')}`);
  return out;
}
