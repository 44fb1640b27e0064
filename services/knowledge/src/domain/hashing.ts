import { createHash } from 'node:crypto';
import { fnv1a } from '@support-agent/shared';

/** 32-bit FNV-1a over UTF-16 code units, then murmur3's finaliser to spread the bits. */
export function hash32(text: string, seed?: number): number {
  return finish32(fnv1a(text, seed)) >>> 0;
}

/*
 * hash32 piece by piece (fnv1aFrom / fnv1aUnit of packages/shared carry FNV-1a's state through
 * the pieces): `finish32(state) >>> 0` is hash32 of the pieces' concatenation, to the bit.
 */

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
