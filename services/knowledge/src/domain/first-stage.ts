import type { CandidateSet, EmbeddingProvider, QueryTerm } from './ports.js';
import { Scratch } from './typed-arrays.js';
import {
  compareIds,
  denseSimilarity,
  lexicalSimilarity,
  maxBm25,
  relevance,
  round6,
  termIdfs,
} from './scoring.js';

/**
 * The first stage of search over a candidate set: every candidate's lexical and dense
 * similarity, hybrid relevance and ranks, computed from the set's columns into typed arrays
 * (a query has 50–200 candidates, of which the reranker reads `depth`).
 */
export interface FirstStageScores {
  /** IDF of each query term, in the query's order. */
  idfs: Float64Array;
  /** Positions in the set of the candidates scored (not excluded); the arrays below follow it. */
  kept: Int32Array;
  lexical: Float64Array;
  /** Null when the query has no vector. */
  dense: Float64Array | null;
  /** Hybrid relevance, to 6 decimals. */
  relevance: Float64Array;
  /** Indices into `kept` of the `depth` most relevant, best first, ties by entry id. */
  best: number[];
  /**
   * Competition ranks of the `best` (in their order) among all the scored candidates, by
   * lexical and by dense similarity.
   */
  lexicalRank: Float64Array;
  denseRank: Float64Array;
}

/**
 * The arrays of the last first stage, reused by the next (featureRows reads them before it
 * returns) instead of six new ones per search, each a buffer outside V8's heap (typed-arrays.ts).
 */
const scratch = {
  kept: new Scratch((n) => new Int32Array(n)),
  lexical: new Scratch((n) => new Float64Array(n)),
  dense: new Scratch((n) => new Float64Array(n)),
  relevance: new Scratch((n) => new Float64Array(n)),
  lexicalRank: new Scratch((n) => new Float64Array(n)),
  denseRank: new Scratch((n) => new Float64Array(n)),
};

/**
 * The first stage's scores. Its arrays are the module's scratch: valid until the next call,
 * so the caller reads them before anything else can run a search (no await in between).
 */
export function firstStage(
  query: { terms: readonly QueryTerm[]; dense: Float32Array | null },
  set: CandidateSet,
  cosineRange: EmbeddingProvider['cosineRange'],
  depth: number,
  exclude?: (entryId: string) => boolean,
): FirstStageScores {
  const kept = keptPositions(set, exclude);
  const n = kept.length;
  const idfs = termIdfs(query.terms, set);
  const cosines = query.dense ? set.cosines : null;
  const lexical = scratch.lexical.take(n);
  // Without a query vector every dense rank is 1: ranked among zeros.
  const denseOrZero = scratch.dense.take(n);
  const dense = cosines ? denseOrZero : null;
  const relevanceOf = scratch.relevance.take(n);
  const max = maxBm25(query.terms, idfs);
  for (let i = 0; i < n; i++) {
    const k = kept[i]!;
    lexical[i] = lexicalSimilarity(set.bm25[k]!, max);
    if (dense) dense[i] = denseSimilarity(cosines![k]!, cosineRange);
    relevanceOf[i] = round6(relevance(lexical[i]!, dense ? dense[i]! : null));
  }
  const best = bestOf(relevanceOf, (i) => set.idOf(kept[i]!), depth);
  return {
    idfs,
    kept,
    lexical,
    dense,
    relevance: relevanceOf,
    best,
    lexicalRank: competitionRanks(lexical, best, scratch.lexicalRank.take(best.length)),
    denseRank: competitionRanks(denseOrZero, best, scratch.denseRank.take(best.length)),
  };
}

function keptPositions(set: CandidateSet, exclude?: (entryId: string) => boolean): Int32Array {
  const kept = scratch.kept.take(set.size);
  let n = 0;
  for (let k = 0; k < set.size; k++) if (!exclude?.(set.idOf(k))) kept[n++] = k;
  return kept.subarray(0, n);
}

/**
 * The competition rank among `values` of the values at `of` (all of them by default): 1 + the
 * number of strictly larger values, so equal values share a rank and twins tie. Counted, not
 * sorted: only the reranked few need a rank.
 */
export function competitionRanks(
  values: Float64Array,
  of: readonly number[] = Array.from(values.keys()),
  ranks = new Float64Array(of.length),
): Float64Array {
  for (let r = 0; r < of.length; r++) {
    const v = values[of[r]!]!;
    let larger = 0;
    // Counted without a branch: whether a value is larger is a coin toss the CPU would mispredict.
    for (let i = 0; i < values.length; i++) larger += +(values[i]! > v);
    ranks[r] = larger + 1;
  }
  return ranks;
}

/**
 * Indices of the `depth` largest scores, largest first, equal scores by id (code-unit order):
 * kept in order by insertion, so only the few that enter are compared (ids only on ties).
 */
export function bestOf(
  scores: ArrayLike<number>,
  idOf: (i: number) => string,
  depth: number,
): number[] {
  const best: number[] = [];
  const before = (a: number, b: number) =>
    scores[a]! > scores[b]! || (scores[a] === scores[b] && compareIds(idOf(a), idOf(b)) < 0);
  for (let i = 0; i < scores.length && depth > 0; i++) {
    if (best.length === depth) {
      if (!before(i, best[depth - 1]!)) continue;
      best.pop();
    }
    let at = best.length;
    for (; at > 0 && before(i, best[at - 1]!); at--) best[at] = best[at - 1]!;
    best[at] = i;
  }
  return best;
}
