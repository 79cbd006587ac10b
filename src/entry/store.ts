import type { S3ClientConfigLike, S3ClientLike } from '../store/s3/client-shape.js';
import { defaultStoreUrl, openStore, type OpenStoreOptions } from '../store/open.js';
import type { ObjectStore } from '../store/port.js';

export interface StoreSettings {
  store?: string | ObjectStore;
  s3?: S3ClientLike | S3ClientConfigLike;
  s3Options?: OpenStoreOptions['s3Options'];
  create?: boolean;
}

export interface ResolvedStore {
  store: ObjectStore;
  /** The URL it was opened from; undefined for an adapter object the host handed in. */
  url: string | undefined;
}

/** The vault's store: the host's adapter as it is, else opened from its URL (default ./.memvault.db). */
export async function resolveStore(settings: StoreSettings): Promise<ResolvedStore> {
  if (typeof settings.store === 'object') return { store: settings.store, url: undefined };
  const url = settings.store ?? defaultStoreUrl();
  const store = await openStore(url, {
    ...(settings.s3 !== undefined ? { s3: settings.s3 } : {}),
    ...(settings.s3Options ? { s3Options: settings.s3Options } : {}),
    ...(settings.create === false ? { create: false } : {}),
  });
  return { store, url };
}
