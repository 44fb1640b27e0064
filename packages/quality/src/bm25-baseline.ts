import type { EvalCollection } from './eval-data.js';
import type { RankedQuery } from './retrieval-metrics.js';

/**
 * The reference BM25 of the evaluation: k1=1.2, b=0.75 over question+answer,
 * lower-case alphanumeric tokens, no stemming, no stop words, Lucene's IDF.
 * Deliberately plain: the project's retrieval must beat it on the same data.
 */
export interface Bm25Doc {
  id: string;
  text: string;
}

const tokenize = (s: string): string[] =>
  s
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

export class Bm25Baseline {
  private readonly tfs: Map<string, number>[];
  private readonly lengths: number[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  constructor(
    private readonly docs: Bm25Doc[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.tfs = docs.map((d) => {
      const tf = new Map<string, number>();
      for (const t of tokenize(d.text)) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return tf;
    });
    this.lengths = docs.map((d) => tokenize(d.text).length);
    this.avgLength = this.lengths.reduce((a, x) => a + x, 0) / Math.max(1, docs.length);
  }

  /** Ids of documents with a positive score, best first, ties by id; at most `limit`. */
  search(query: string, limit: number): string[] {
    const n = this.docs.length;
    const terms = tokenize(query);
    const scored: { id: string; score: number }[] = [];
    this.docs.forEach((doc, i) => {
      let score = 0;
      const tf = this.tfs[i]!;
      for (const t of terms) {
        const f = tf.get(t) ?? 0;
        if (f === 0) continue;
        const df = this.df.get(t) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score +=
          (idf * f * (this.k1 + 1)) /
          (f + this.k1 * (1 - this.b + (this.b * this.lengths[i]!) / this.avgLength));
      }
      if (score > 0) scored.push({ id: doc.id, score });
    });
    scored.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    return scored.slice(0, limit).map((s) => s.id);
  }
}

/** The baseline's top `k` for each query of a test collection, over question + answer. */
export function bm25Rankings(
  collection: Omit<EvalCollection, 'judgements'>,
  k: number,
): RankedQuery[] {
  const bm25 = new Bm25Baseline(
    collection.corpus.map((c) => ({ id: c.faq_id, text: `${c.question} ${c.answer}` })),
  );
  return collection.queries.map((q) => ({
    queryId: q.query_id,
    threadId: q.thread_id,
    ranking: bm25.search(q.text, k),
  }));
}
