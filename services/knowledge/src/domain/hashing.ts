import { createHash } from 'node:crypto';
import { fnv1a } from '@support-agent/shared';

/** 32-bit FNV-1a over UTF-16 code units, then murmur3's finaliser to spread the bits. */
export function hash32(text: string, seed?: number): number {
  return finish32(fnv1a(text, seed)) >>> 0;
}

/*
 * hash32 piece by piece, for text that is never made into a string (a feature of the built-in
 * embeddings: a range of a word, two stems joined by a space): FNV-1a's state, started at the
 * seed, is carried through the pieces' code units, then finished. `finish32(state) >>> 0` is
 * hash32 of the pieces' concatenation, to the bit. States are signed 32-bit integers (what
 * Math.imul and ^ give), so they stay small integers in V8.
 */

/** FNV-1a's state after `text`'s code units from `start` to `end` (exclusive). */
export function fnv1aFrom(state: number, text: string, start = 0, end = text.length): number {
  let h = state | 0;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/** FNV-1a's state after one more code unit. */
export function fnv1aUnit(state: number, code: number): number {
  return Math.imul(state ^ code, 0x01000193);
}

/** murmur3's finaliser of a state, as a signed 32-bit integer (`>>> 0` makes it hash32's). */
export function finish32(state: number): number {
  let h = state;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Sparse-vector dimension of a term: a stable 32-bit hash, the same in every process. */
export function termId(term: string): number {
  return hash32(term);
}

/** Fixed namespace of this service's point ids (a random UUID, chosen once). */
export const POINT_ID_NAMESPACE = '6f1d8e0a-3c2b-4f5e-9a7d-2b8c4e6f1a3d';

/** RFC 4122 version-5 (SHA-1, name-based) UUID. */
export function uuidV5(name: string, namespace: string = POINT_ID_NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The point id of an organization's entry: the org is part of the name, so tenants never collide. */
export function pointIdOf(orgId: string, entryId: string): string {
  return uuidV5(`${orgId}:${entryId}`);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
