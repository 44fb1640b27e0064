import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import { EmbeddedIndex } from '../data-access/embedded-index.js';
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
  /** Cross-validation group: queries of one group are never split across folds. */
  group: string;
  relevant: Set<string>;
  /** The candidates reranked with a query embedding. */
  hybrid: FeatureRow[];
  /** The same without one (the lexical-only fallback). */
  lexical: FeatureRow[];
  /** Candidates of the KB without the query's relevant entries (a question the KB does not cover). */
  uncovered: FeatureRow[];
  /** The same without a query embedding. */
  lexicalUncovered: FeatureRow[];
}

export async function labelledQueries(
  collection: EvalCollection,
  depth: number,
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
    for (const q of collection.queries) {
      const relevant = collection.judgements.relevant.get(q.query_id);
      if (!relevant || relevant.size === 0) continue;
      const terms = queryTerms(q.text);
      const vector = await embeddings.embedQuery(q.text);
      const dense = isZero(vector) ? null : vector;
      const limit = candidateCount(depth);
      const set = await index.candidates({ orgId, dense, terms, limit });
      const lexicalSet = await index.candidates({ orgId, dense: null, terms, limit });
      const range = embeddings.cosineRange;
      const notRelevant = (c: { entry: { id: string } }) => relevant.has(c.entry.id);
      out.push({
        queryId: q.query_id,
        group: q.thread_id || [...relevant][0]!,
        relevant,
        hybrid: featureRows({ terms, dense }, set, range, depth),
        lexical: featureRows({ terms, dense: null }, lexicalSet, range, depth),
        uncovered: featureRows({ terms, dense }, set, range, depth, notRelevant),
        lexicalUncovered: featureRows(
          { terms, dense: null },
          lexicalSet,
          range,
          depth,
          notRelevant,
        ),
      });
    }
    return out;
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
