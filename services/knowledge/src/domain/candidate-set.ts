import type { Candidate, CandidateSet, QueryTerm } from './ports.js';
import { bm25Score, termIdfs } from './scoring.js';

/**
 * A candidate with its entry's whole sparse vector, as an index that returns points gets it
 * (unique indices, in any order). Its profile may be a getter: it is read only for the
 * candidates the reranker reads.
 */
export interface CandidateWithVector extends Candidate {
  sparse: { indices: ArrayLike<number>; values: ArrayLike<number> };
}

/** The organization's statistics that lexical scoring needs. */
export interface TermStats {
  docCount: number;
  documentFrequency: Map<number, number>;
}

/**
 * The candidate set of candidate objects (an index that returns whole points, such as Qdrant):
 * each entry once (the first occurrence), its BM25 from its weights for the query's terms (read
 * from its sparse vector), `query` with or without a vector as the candidates' cosines say.
 */
export function candidateSetOf(
  terms: readonly QueryTerm[],
  stats: TermStats,
  candidates: readonly CandidateWithVector[],
  hasVector: boolean,
): CandidateSet {
  const seen = new Set<string>();
  const kept = candidates.filter((c) => !seen.has(c.entry.id) && seen.add(c.entry.id));
  const idfs = termIdfs(terms, stats);
  const bm25 = new Float64Array(kept.length);
  const cosines = hasVector ? new Float64Array(kept.length) : null;
  kept.forEach((c, k) => {
    bm25[k] = bm25Score(terms, idfs, (t) => weightOf(c.sparse, terms[t]!.id));
    if (cosines) cosines[k] = c.cosine ?? 0;
  });
  return {
    docCount: stats.docCount,
    documentFrequency: stats.documentFrequency,
    size: kept.length,
    bm25,
    cosines,
    idOf: (k) => kept[k]!.entry.id,
    candidate: (k) => {
      const { entry, profile } = kept[k]!;
      return { entry, cosine: cosines ? cosines[k]! : null, ...(profile ? { profile } : {}) };
    },
  };
}

/** The weight of dimension `id` in a sparse vector in any order, 0 when absent. */
function weightOf(v: CandidateWithVector['sparse'], id: number): number {
  for (let i = 0; i < v.indices.length; i++) if (v.indices[i] === id) return v.values[i] ?? 0;
  return 0;
}

/** No candidates (an empty organization, or a query with nothing to look for). */
export function noCandidates(terms: readonly QueryTerm[], stats?: TermStats): CandidateSet {
  return candidateSetOf(terms, stats ?? { docCount: 0, documentFrequency: new Map() }, [], false);
}
