/**
 * 32-bit FNV-1a over UTF-16 code units, seeded (FNV's offset basis by default): a fast string
 * hash that is the same in every process, for hashed features and term ids. Not for secrets.
 */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  return fnv1aFrom(seed, text) >>> 0;
}

/*
 * FNV-1a piece by piece, for text that is never made into a string (a range of a word, two
 * words joined by a space): the state, started at the seed, is carried through the pieces' code
 * units; `>>> 0` of the last state is fnv1a of the pieces' concatenation, to the bit. States are
 * signed 32-bit integers (what Math.imul and ^ give), so they stay small integers in V8.
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
