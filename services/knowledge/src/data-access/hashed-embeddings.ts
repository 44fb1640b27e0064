import { hash32 } from '../domain/hashing.js';
import type { EmbeddingProvider, EntryText, Fingerprint } from '../domain/ports.js';
import { questionText } from '../domain/scoring.js';
import { isStopword, stem, words } from '../domain/tokenizer.js';

/**
 * Built-in embeddings that need no model: the feature-hashing trick
 * (Weinberger et al. 2009) over stemmed word unigrams, word bigrams and character
 * 3–5-grams of content words, with sublinear term frequency and signed hashing,
 * each feature family L2-normalised then mixed, the result L2-normalised.
 * Deterministic: the same text always gives the same vector in every process.
 *
 * Character n-grams make it tolerant of inflections, compounds and typos that
 * exact terms miss ("acc" ~ "account", "spreadsheet" ~ "spreadsheets").
 */
export const HASHED_MODEL = 'hashed-v1';
export const HASHED_DEFAULT_DIMENSIONS = 512;

/** The feature families of a text's vector: each hashed with its own seed, mixed by weight. */
const FAMILY = {
  unigram: { seed: 0x9e3779b1, weight: 1 },
  bigram: { seed: 0x85ebca77, weight: 0.5 },
  chargram: { seed: 0xc2b2ae3d, weight: 0.5 },
};
/** Character n-grams from 3 to 5 characters long. */
const CHARGRAM_LENGTHS = [3, 4, 5];
/** An entry's vector leans towards its question, which says what the entry is about. */
const QUESTION_SHARE = 0.6;

export class HashedEmbeddings implements EmbeddingProvider {
  readonly fingerprint: Fingerprint;
  private part: Float32Array | undefined;
  /** Signed hashing keeps unrelated texts near 0; a text with itself is 1. */
  readonly cosineRange = { unrelated: 0, identical: 1 };

  constructor(readonly dimensions: number = HASHED_DEFAULT_DIMENSIONS) {
    if (!Number.isInteger(dimensions) || dimensions < 16 || dimensions > 65_536) {
      throw new Error(
        `hashed embeddings: dimensions must be an integer in 16..65536, got ${dimensions}`,
      );
    }
    this.fingerprint = { provider: 'hashed', model: HASHED_MODEL, dimensions };
  }

  async embedDocuments(entries: EntryText[]): Promise<Float32Array[]> {
    return entries.map((e) => this.embedEntry(e));
  }

  async embedQuery(text: string): Promise<Float32Array> {
    return this.embedText(text);
  }

  async embedTexts(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedText(t));
  }

  /** Synchronous variant for bulk work (benchmarks, re-indexing). */
  embedEntry(entry: EntryText): Float32Array {
    const q = this.embedText(questionText(entry));
    const a = this.embedText(entry.answer);
    const v = new Float32Array(this.dimensions);
    for (let i = 0; i < v.length; i++) v[i] = QUESTION_SHARE * q[i]! + (1 - QUESTION_SHARE) * a[i]!;
    return normalize(v);
  }

  embedText(text: string): Float32Array {
    const all = words(text);
    const content = all.filter((w) => !isStopword(w));
    const stems = content.map(stem);

    const unigrams = new Map<string, number>();
    for (const s of stems) bump(unigrams, s);
    const bigrams = new Map<string, number>();
    for (let i = 0; i + 1 < stems.length; i++) bump(bigrams, `${stems[i]} ${stems[i + 1]}`);
    const chargrams = new Map<string, number>();
    for (const w of content) {
      const padded = `<${w}>`;
      for (const n of CHARGRAM_LENGTHS) {
        for (let i = 0; i + n <= padded.length; i++) bump(chargrams, padded.slice(i, i + n));
      }
    }

    const v = new Float32Array(this.dimensions);
    this.addFamily(v, unigrams, FAMILY.unigram);
    this.addFamily(v, bigrams, FAMILY.bigram);
    this.addFamily(v, chargrams, FAMILY.chargram);
    return normalize(v);
  }

  private addFamily(
    target: Float32Array,
    features: Map<string, number>,
    { seed, weight }: { seed: number; weight: number },
  ): void {
    if (features.size === 0) return;
    // One scratch row per instance (embedding is synchronous), cleared for each family.
    const part = (this.part ??= new Float32Array(this.dimensions)).fill(0);
    const dimensions = this.dimensions;
    // forEach: a for…of over the entries would allocate a [key, value] pair per feature.
    features.forEach((tf, feature) => {
      const h = hash32(feature, seed);
      const sign = h & 0x80000000 ? -1 : 1;
      part[h % dimensions]! += sign * (1 + Math.log(tf));
    });
    let norm = 0;
    for (let i = 0; i < part.length; i++) norm += part[i]! * part[i]!;
    if (norm === 0) return;
    const scale = weight / Math.sqrt(norm);
    for (let i = 0; i < part.length; i++) target[i]! += part[i]! * scale;
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Scales to unit length in place; the zero vector stays zero. */
export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  if (norm === 0) return v;
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}
