import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { EmbeddedIndex } from '../data-access/embedded-index/index.js';
import { HashedEmbeddings } from '../data-access/hashed-embeddings.js';
import { collectionName } from '../domain/fingerprint.js';
import { featureRows, type FeatureRow } from '../domain/rerank.js';
import { queryTerms } from '../domain/scoring.js';
import { candidateCount, isZero, type KnowledgeDeps } from '../domain/search.js';
import { upsertEntries } from '../domain/upsert.js';
import type { EvalCollection } from './eval-data.js';

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
  const dir = mkdtempSync(join(tmpdir(), 'fit-confidence-'));
  const embeddings = new HashedEmbeddings();
  const index = new EmbeddedIndex({
    dir,
    collection: collectionName('fit', embeddings.fingerprint),
    dimensions: embeddings.dimensions,
  });
  try {
    await index.init();
    const deps: KnowledgeDeps = {
      index,
      embeddings,
      logger: createLogger('fit-confidence', 'warn'),
      now: Date.now,
    };
    const orgId = 'fit';
    for (let i = 0; i < collection.corpus.length; i += 500) {
      const chunk = collection.corpus
        .slice(i, i + 500)
        .map((c) => ({ id: c.faq_id, question: c.question, answer: c.answer, tags: [] }));
      const res = await upsertEntries(deps, orgId, chunk);
      if (res.failed.length > 0)
        throw new Error(`import failed: ${JSON.stringify(res.failed.slice(0, 3))}`);
    }
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
    await index.close();
    rmSync(dir, { recursive: true, force: true });
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
