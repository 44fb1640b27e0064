import { fnv1aFrom, fnv1aUnit } from '@support-agent/shared';
import { finish32 } from '../domain/hashing.js';

/**
 * The most features a table keeps room for between texts (a text of 10,000 letters has at most
 * 30,000 character n-grams): ≈ 0.75 MB of arrays. A longer text grows it for its own count.
 */
const RETAINED_FEATURES = 32_768;

/**
 * How many times each feature of one family occurs in a text, in the order the features are
 * first seen: what a `Map<string, number>` keyed by the feature's text holds, without making
 * the text. The caller hashes a feature from the characters where it lies and says where that
 * is (two integers whose meaning is the family's); features with equal hashes are told apart
 * by `same`, which compares their characters, so distinct features stay distinct exactly as
 * distinct Map keys do. One table serves text after text (embedding is synchronous): once it
 * has grown to the size of the texts seen, counting allocates nothing.
 */
export class FeatureCounts {
  /** hash32 of feature k (as a signed integer), k in first-seen order. */
  hashes = new Int32Array(16);
  /** Occurrences of feature k. */
  counts = new Int32Array(16);
  /** Where feature k's characters are. */
  private at = new Int32Array(16);
  private span = new Int32Array(16);
  size = 0;
  /** Open addressing with linear probing: 1 + the feature in each slot, 0 when empty. */
  private slots = new Int32Array(32);
  private mask = 31;

  constructor(
    private readonly same: (
      at: number,
      span: number,
      otherAt: number,
      otherSpan: number,
    ) => boolean,
  ) {}

  /**
   * Empties the table for a text of at most `most` features. Only the slots that text can use
   * are cleared (at most half of them filled, so probes stay short): a short query after a
   * long entry clears a few hundred, not the whole table. Arrays grown past RETAINED_FEATURES
   * for a long text are cut back to that size at the next text.
   */
  clear(most: number): void {
    let capacity = 32;
    while (capacity < 2 * most) capacity *= 2;
    const slots = this.slots.length;
    if (capacity > slots) this.slots = new Int32Array(capacity);
    else if (slots > Math.max(capacity, 2 * RETAINED_FEATURES))
      this.slots = new Int32Array(Math.max(capacity, 2 * RETAINED_FEATURES));
    else this.slots.fill(0, 0, capacity);
    this.mask = capacity - 1;
    const length = this.hashes.length;
    if (most > length) this.resize(Math.max(most, Math.min(2 * length, RETAINED_FEATURES)));
    else if (length > Math.max(most, RETAINED_FEATURES))
      this.resize(Math.max(most, RETAINED_FEATURES));
    this.size = 0;
  }

  private resize(length: number): void {
    this.hashes = new Int32Array(length);
    this.counts = new Int32Array(length);
    this.at = new Int32Array(length);
    this.span = new Int32Array(length);
  }

  /** Counts one occurrence of the feature with `hash` found at (`at`, `span`). */
  add(hash: number, at: number, span: number): void {
    const { slots, hashes, mask } = this;
    let s = hash & mask;
    for (let k = slots[s]! - 1; k >= 0; k = slots[s]! - 1) {
      if (hashes[k] === hash && this.same(this.at[k]!, this.span[k]!, at, span)) {
        this.counts[k]!++;
        return;
      }
      s = (s + 1) & mask;
    }
    const k = this.size++;
    slots[s] = k + 1;
    hashes[k] = hash;
    this.counts[k] = 1;
    this.at[k] = at;
    this.span[k] = span;
  }
}

const SPACE = 0x20;
const OPEN = 0x3c; // '<'
const CLOSE = 0x3e; // '>'
/** The longest character n-gram (padded words are read this far from each start). */
const MAX_CHARGRAM = 5;

/**
 * The feature families of the built-in embeddings, counted into reusable tables: stemmed word
 * unigrams, word bigrams (`"a b"`), and character n-grams of each word padded as `<word>`.
 * Each feature is hashed with its family's seed from the characters it is made of; the counts
 * are those of the Maps keyed by `stem`, `${a} ${b}` and `` `<${w}>`.slice(i, i + n) ``, in
 * the same first-insertion order (a family's float sums depend on it).
 */
export class TextFeatures {
  private stems: readonly string[] = [];
  private words: readonly string[] = [];
  private readonly unigramTable = new FeatureCounts((a, _, b) => this.stems[a] === this.stems[b]);
  private readonly bigramTable = new FeatureCounts(
    (a, _, b) => this.stems[a] === this.stems[b] && this.stems[a + 1] === this.stems[b + 1],
  );
  private readonly chargramTable = new FeatureCounts((a, aSpan, b, bSpan) =>
    sameChargram(this.words[a]!, aSpan, this.words[b]!, bSpan),
  );
  /** FNV states of a padded word's n-grams by start, for n = 3, 4, 5 (≤ 40-letter words). */
  private grams = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

  /** Each stem once, counted. */
  unigrams(stems: readonly string[], seed: number): FeatureCounts {
    this.stems = stems;
    const table = this.unigramTable;
    table.clear(stems.length);
    for (let i = 0; i < stems.length; i++) table.add(finish32(fnv1aFrom(seed, stems[i]!)), i, 0);
    return table;
  }

  /** Each pair of neighbouring stems once, counted (a feature at i is stems i and i + 1). */
  bigrams(stems: readonly string[], seed: number): FeatureCounts {
    this.stems = stems;
    const table = this.bigramTable;
    table.clear(stems.length);
    for (let i = 0; i + 1 < stems.length; i++) {
      const h = fnv1aFrom(fnv1aUnit(fnv1aFrom(seed, stems[i]!), SPACE), stems[i + 1]!);
      table.add(finish32(h), i, 0);
    }
    return table;
  }

  /**
   * Each character 3-, 4- and 5-gram of `<word>` once, counted: word by word, all 3-grams, then
   * all 4-grams, then all 5-grams, as `slice` made them. A feature's span is start · 8 + n.
   * A word yields at most 3 · its length n-grams.
   */
  chargrams(words: readonly string[], seed: number): FeatureCounts {
    this.words = words;
    const table = this.chargramTable;
    let most = 0;
    for (const w of words) most += 3 * w.length;
    table.clear(most);
    for (let wi = 0; wi < words.length; wi++) {
      const w = words[wi]!;
      const padded = w.length + 2;
      if (padded > this.grams[0]!.length) this.growGrams(padded);
      // One FNV pass from each start gives that start's 3-, 4- and 5-gram states in turn.
      for (let i = 0; i + 3 <= padded; i++) {
        let h = seed | 0;
        const end = Math.min(padded, i + MAX_CHARGRAM);
        for (let p = i; p < end; p++) {
          h = fnv1aUnit(h, paddedCode(w, p));
          if (p - i >= 2) this.grams[p - i - 2]![i] = h;
        }
      }
      for (let n = 3; n <= MAX_CHARGRAM; n++) {
        const states = this.grams[n - 3]!;
        for (let i = 0; i + n <= padded; i++) table.add(finish32(states[i]!), wi, i * 8 + n);
      }
    }
    return table;
  }

  private growGrams(padded: number): void {
    this.grams = this.grams.map(() => new Int32Array(padded));
  }
}

/** Code unit `p` of `<w>`. */
function paddedCode(w: string, p: number): number {
  if (p === 0) return OPEN;
  if (p > w.length) return CLOSE;
  return w.charCodeAt(p - 1);
}

/** Whether two character n-grams (word, start · 8 + n) are the same text. */
function sameChargram(a: string, aSpan: number, b: string, bSpan: number): boolean {
  const n = aSpan & 7;
  if (n !== (bSpan & 7)) return false;
  const aStart = aSpan >> 3;
  const bStart = bSpan >> 3;
  if (a === b && aStart === bStart) return true;
  for (let t = 0; t < n; t++) {
    if (paddedCode(a, aStart + t) !== paddedCode(b, bStart + t)) return false;
  }
  return true;
}
