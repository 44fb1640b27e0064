import {
  candidateCount,
  featureRows,
  isZero,
  queryTerms,
  type FeatureRow,
} from '@support-agent/knowledge/search';
import type { EvalCollection } from './eval-data.js';
import { openInProcessKb } from './in-process-kb.js';

/**
 * The reranking features of labelled queries against their KB, computed exactly as
 * search computes them (built-in embeddings, embedded index in a temporary directory):
 * the input of `npm run fit:confidence`.
 */
export interface LabelledQuery {
  queryId: string;
  text: string;
  /** False for a question the KB is known not to answer (every hit is wrong). */
  covered: boolean;
  /** Cross-validation group: queries of one group are never split across folds. */
  group: string;
  relevant: Set<string>;
  /** The candidates reranked with a query embedding. */
  hybrid: FeatureRow[];
  /** The same without one (the lexical-only fallback). */
  lexical: FeatureRow[];
  /** Hybrid candidates of the KB without the query's relevant entries (a question it does not cover). */
  uncovered: FeatureRow[];
}

export async function labelledQueries(
  collection: EvalCollection,
  depth: number,
  /** Questions the KB does not answer (no relevant entry). */
  offTopic: string[] = [],
): Promise<LabelledQuery[]> {
  const kb = await openInProcessKb(collection.corpus, 'fit');
  const { index, embeddings, orgId } = kb;
  try {
    const out: LabelledQuery[] = [];
    const asked = [
      ...collection.queries.map((q) => ({
        id: q.query_id,
        group: q.thread_id,
        text: q.text,
        covered: true,
        relevant: collection.judgements.relevant.get(q.query_id) ?? new Set<string>(),
      })),
      ...offTopic.map((text, i) => ({
        id: `off-topic-${i}`,
        group: `off-topic-${i}`,
        text,
        covered: false,
        relevant: new Set<string>(),
      })),
    ];
    for (const q of asked) {
      // A covered question without judgements teaches nothing.
      if (q.covered && q.relevant.size === 0) continue;
      const terms = queryTerms(q.text);
      const vector = await embeddings.embedQuery(q.text);
      const dense = isZero(vector) ? null : vector;
      const limit = candidateCount(depth);
      const set = await index.candidates({ orgId, dense, terms, limit });
      const lexicalSet = await index.candidates({ orgId, dense: null, terms, limit });
      const range = embeddings.cosineRange;
      const relevant = q.relevant;
      out.push({
        queryId: q.id,
        text: q.text,
        covered: q.covered,
        group: q.group || [...relevant][0]!,
        relevant,
        hybrid: detached(featureRows({ terms, dense }, set, range, depth)),
        lexical: detached(featureRows({ terms, dense: null }, lexicalSet, range, depth)),
        uncovered: detached(
          featureRows({ terms, dense }, set, range, depth, (id) => relevant.has(id)),
        ),
      });
    }
    return out;
  } finally {
    await kb.close();
  }
}

/** Rows whose entries hold their text (read now): they outlive the index they came from. */
function detached(rows: FeatureRow[]): FeatureRow[] {
  return rows.map((row) => {
    const { id, question, answer, tags, updatedAt, contentHash } = row.candidate.entry;
    const entry = { id, question, answer, tags, updatedAt, contentHash };
    return { ...row, candidate: { ...row.candidate, entry } };
  });
}
