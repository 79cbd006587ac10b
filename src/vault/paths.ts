/** Helpers on canonical memory paths (as produced by the path guard). */
export const MEMORY_ROOT = '/memories';

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
