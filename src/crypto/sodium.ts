/**
 * libsodium set-up. `sodium.ready` compiles a WebAssembly module; it is paid once per process, so
 * every caller shares one memoised promise. Synchronous code (seal/open inside a codec) uses
 * `readySodium()`, which only works after some caller has awaited `loadSodium()`; codec providers
 * await it in their factory, so the synchronous paths never run before the library is ready.
 */
import sodium from 'libsodium-wrappers';

export type Sodium = typeof sodium;

let readyPromise: Promise<Sodium> | undefined;
let isReady = false;

export function loadSodium(): Promise<Sodium> {
  readyPromise ??= sodium.ready.then(() => {
    isReady = true;
    return sodium;
  });
  return readyPromise;
}

/** The library, for synchronous callers that run after `await loadSodium()`. */
export function readySodium(): Sodium {
  if (!isReady) throw new Error('libsodium used before `await loadSodium()`');
  return sodium;
}
