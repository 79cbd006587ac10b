/**
 * The one concurrency pool. `mapLimit` and `forEachLimit` run `fn` over the items, at most `limit`
 * at a time, in item order of starting.
 *
 * Failure policy (the same for both): after the first failure no new item starts, the items in
 * flight run to their end, and then the first error is thrown. So a caller never returns while its
 * requests still run (a command's locks and accounting outlive no request), and a failing batch
 * stops early instead of running every remaining item. A caller that wants every item tried catches
 * inside `fn` (the expiry deleter records each failure and never throws from `fn`).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, Math.floor(limit)), items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** `mapLimit` without results; the same failure policy. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  await mapLimit(items, limit, fn);
}
