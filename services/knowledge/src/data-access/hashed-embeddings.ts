import { TimeSlicer } from '@support-agent/shared';
import type { EmbeddingProvider, EntryText, Fingerprint } from '../domain/ports.js';
import { questionText } from '../domain/scoring.js';
import { isStopword, stem, words } from '../domain/tokenizer.js';
import { type FeatureCounts, TextFeatures } from './feature-counts.js';

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
export const FAMILY = {
  unigram: { seed: 0x9e3779b1, weight: 1 },
  bigram: { seed: 0x85ebca77, weight: 0.5 },
  chargram: { seed: 0xc2b2ae3d, weight: 0.5 },
};
/** An entry's vector leans towards its question, which says what the entry is about. */
const QUESTION_SHARE = 0.6;

export class HashedEmbeddings implements EmbeddingProvider {
  readonly fingerprint: Fingerprint;
  private part: Float32Array | undefined;
  /** Bits of the dimensions a text's families touched, and of those one family touched. */
  private used: Int32Array | undefined;
  private touched: Int32Array | undefined;
  /** The feature tables, reused by every text this instance embeds. */
  private features: TextFeatures | undefined;
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

  /** Time-sliced (TimeSlicer): a bulk import's batch never holds the event loop for long. */
  async embedDocuments(entries: EntryText[]): Promise<Float32Array[]> {
    const slicer = new TimeSlicer();
    const out: Float32Array[] = [];
    for (const e of entries) {
      await slicer.next();
      out.push(this.embedEntry(e));
    }
    return out;
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
    const features = (this.features ??= new TextFeatures());
    const v = new Float32Array(this.dimensions);
    const used = (this.used ??= new Int32Array((this.dimensions + 31) >> 5));
    // Each family is counted, then added, before the next reuses the scratch.
    this.addFamily(v, used, features.unigrams(stems, FAMILY.unigram.seed), FAMILY.unigram.weight);
    this.addFamily(v, used, features.bigrams(stems, FAMILY.bigram.seed), FAMILY.bigram.weight);
    this.addFamily(
      v,
      used,
      features.chargrams(content, FAMILY.chargram.seed),
      FAMILY.chargram.weight,
    );
    // normalize(v), over the dimensions the families touched (the others are 0).
    let norm = 0;
    for (let w = 0; w < used.length; w++)
      for (let b = used[w]!; b !== 0; b &= b - 1) norm += square(v[bitAt(w, b)]!);
    if (norm !== 0) {
      const inv = 1 / Math.sqrt(norm);
      for (let w = 0; w < used.length; w++)
        for (let b = used[w]!; b !== 0; b &= b - 1) v[bitAt(w, b)]! *= inv;
    }
    used.fill(0);
    return v;
  }

  /**
   * Adds a family's features, in first-seen order, L2-normalised and weighted, and flags the
   * dimensions it touched in `used`. A query's features touch a fraction of the dimensions:
   * only those are read, in ascending order (a bit per dimension), so every sum is the one a
   * sweep over all of them makes, to the bit (the others would only add zeros).
   */
  private addFamily(
    target: Float32Array,
    used: Int32Array,
    features: FeatureCounts,
    weight: number,
  ): void {
    const { hashes, counts, size } = features;
    if (size === 0) return;
    const dimensions = this.dimensions;
    // Scratch rows per instance (embedding is synchronous), all 0 again after each family.
    const part = (this.part ??= new Float32Array(dimensions));
    const touched = (this.touched ??= new Int32Array(used.length));
    for (let k = 0; k < size; k++) {
      const h = hashes[k]!;
      const sign = h < 0 ? -1 : 1;
      const d = (h >>> 0) % dimensions;
      part[d]! += sign * (1 + Math.log(counts[k]!));
      touched[d >> 5]! |= 1 << (d & 31);
    }
    // Loops written out, not a visitor: a closure over `norm` is an allocation per family.
    let norm = 0;
    for (let w = 0; w < touched.length; w++)
      for (let b = touched[w]!; b !== 0; b &= b - 1) norm += square(part[bitAt(w, b)]!);
    const scale = norm !== 0 ? weight / Math.sqrt(norm) : 0;
    for (let w = 0; w < touched.length; w++) {
      for (let b = touched[w]!; b !== 0; b &= b - 1) {
        const d = bitAt(w, b);
        if (norm !== 0) target[d]! += part[d]! * scale;
        part[d] = 0;
      }
      used[w]! |= touched[w]!;
      touched[w] = 0;
    }
  }
}

const square = (x: number): number => x * x;

/**
 * The index of the lowest set bit of `b`, word `w` of a bitmap (bit i of word i >> 5): with
 * `b &= b - 1` after each, a word's bits are visited in ascending order.
 */
function bitAt(w: number, b: number): number {
  return (w << 5) | (31 - Math.clz32(b & -b));
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
