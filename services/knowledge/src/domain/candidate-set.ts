import type { Candidate, CandidateSet, QueryTerm, SparseVector } from './ports.js';
import { sparseValue } from './scoring.js';

/** A candidate with its entry's whole sparse vector, as an index that returns points gets it. */
export interface CandidateWithVector extends Candidate {
  sparse: SparseVector;
}

/** The organization's statistics that lexical scoring needs. */
export interface TermStats {
  docCount: number;
  documentFrequency: Map<number, number>;
}

/**
 * The candidate set of candidate objects (an index that returns whole points, such as Qdrant):
 * each entry once (the first occurrence), its weights for the query's terms read from its
 * sparse vector, `query` with or without a vector as the candidates' cosines say.
 */
export function candidateSetOf(
  terms: readonly QueryTerm[],
  stats: TermStats,
  candidates: readonly CandidateWithVector[],
  hasVector: boolean,
): CandidateSet {
  const seen = new Set<string>();
  const kept = candidates.filter((c) => !seen.has(c.entry.id) && seen.add(c.entry.id));
  const termCount = terms.length;
  const termWeights = new Float64Array(kept.length * termCount);
  const cosines = hasVector ? new Float64Array(kept.length) : null;
  kept.forEach((c, k) => {
    for (let t = 0; t < termCount; t++)
      termWeights[k * termCount + t] = sparseValue(c.sparse, terms[t]!.id);
    if (cosines) cosines[k] = c.cosine ?? 0;
  });
  return {
    docCount: stats.docCount,
    documentFrequency: stats.documentFrequency,
    size: kept.length,
    termCount,
    termWeights,
    cosines,
    idOf: (k) => kept[k]!.entry.id,
    candidate: (k) => {
      const { entry, profile } = kept[k]!;
      return { entry, cosine: cosines ? cosines[k]! : null, ...(profile ? { profile } : {}) };
    },
  };
}

/** No candidates (an empty organization, or a query with nothing to look for). */
export function noCandidates(terms: readonly QueryTerm[], stats?: TermStats): CandidateSet {
  return candidateSetOf(terms, stats ?? { docCount: 0, documentFrequency: new Map() }, [], false);
}
