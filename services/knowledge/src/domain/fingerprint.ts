import type { Fingerprint } from './ports.js';

/**
 * Version of what the index stores besides the dense vector (sparse weights,
 * payload fields). Bump it when they change: the collection name changes with it,
 * so old and new data never mix and re-indexing moves entries across.
 */
export const INDEX_SCHEMA = 'v1';

/** `provider/model/dimensions`, the identity of a vector space. */
export function fingerprintKey(f: Fingerprint): string {
  return `${f.provider}/${f.model}/${f.dimensions}`;
}

/**
 * The collection of a fingerprint: `<prefix>_<schema>_<provider>_<model>_<dim>`, with
 * characters outside [A-Za-z0-9_-] (e.g. the '/' or '.' of a model name) folded to '-'.
 */
export function collectionName(prefix: string, f: Fingerprint): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
  return `${prefix}_${INDEX_SCHEMA}_${safe(f.provider)}_${safe(f.model)}_${f.dimensions}`;
}

/** Whether `name` is a collection of this prefix (any schema, provider, model, size). */
export function isCollectionOf(prefix: string, name: string): boolean {
  const p = prefix.replace(/[^A-Za-z0-9-]/g, '');
  return new RegExp(`^${p}_v\\d+_[A-Za-z0-9-]+_[A-Za-z0-9-]+_\\d+$`).test(name);
}
