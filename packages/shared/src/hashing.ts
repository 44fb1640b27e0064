/**
 * 32-bit FNV-1a over UTF-16 code units, seeded (FNV's offset basis by default): a fast string
 * hash that is the same in every process, for hashed features and term ids. Not for secrets.
 */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
