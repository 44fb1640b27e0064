import { AppError, type Logger } from '@support-agent/shared';
import type { EmbeddingProvider, KnowledgeIndex } from './ports.js';
import { featureRows, rerank, type RerankModel } from './rerank.js';
import { RERANK_MODEL } from './rerank-model.js';
import { queryTerms } from './scoring.js';
import { validateLimit, validateOrgId, validateQuery } from './validation.js';

/** What every use case of the service needs, wired once in server.ts. */
export interface KnowledgeDeps {
  index: KnowledgeIndex;
  embeddings: EmbeddingProvider;
  logger: Logger;
  now: () => number;
  /** The reranking model; the shipped one unless a test or the fitting script passes another. */
  rerankModel?: RerankModel;
}

export interface SearchInput {
  orgId?: string;
  query?: string;
  limit?: number;
}

export interface SearchResult {
  entryId: string;
  question: string;
  answer: string;
  score: number;
}

/** Candidates rescored per query: enough that fusion order rarely hides a better entry. */
export function candidateCount(limit: number): number {
  return Math.min(100, Math.max(50, limit * 5));
}

/**
 * Searches an organization's KB: hybrid candidates (lexical + dense) from the index,
 * ranked by the first-stage hybrid relevance; the best `depth` of them are reranked
 * and scored with the probability that they answer the query (rerank.ts), best first,
 * ties by entry id. When the embedding provider is down the search degrades to lexical
 * scoring (and the model fitted without dense features) instead of failing.
 */
export async function searchEntries(
  deps: KnowledgeDeps,
  input: SearchInput,
): Promise<SearchResult[]> {
  const orgId = validateOrgId(input.orgId);
  const query = validateQuery(input.query);
  const limit = validateLimit(input.limit);

  const terms = queryTerms(query);
  const dense = await embedQueryOrNull(deps.embeddings, query, deps.logger);
  if (terms.length === 0 && dense === null) return [];

  const model = deps.rerankModel ?? RERANK_MODEL;
  const set = await deps.index.candidates({
    orgId,
    dense,
    terms,
    limit: candidateCount(Math.max(limit, model.depth)),
  });
  if (set.size === 0) return [];
  const rows = featureRows({ terms, dense }, set, deps.embeddings.cosineRange, model.depth);
  return rerank(model, rows, dense !== null, limit).map(({ candidate, score }) => ({
    entryId: candidate.entry.id,
    question: candidate.entry.question,
    answer: candidate.entry.answer,
    score,
  }));
}

async function embedQueryOrNull(
  embeddings: EmbeddingProvider,
  query: string,
  logger: Logger,
): Promise<Float32Array | null> {
  try {
    const v = await embeddings.embedQuery(query);
    return isZero(v) ? null : v;
  } catch (err) {
    if (err instanceof AppError && err.code === 'service_unavailable') {
      logger.warn({ err: err.message }, 'query embedding unavailable: lexical-only search');
      return null;
    }
    throw err;
  }
}

/** A text of stop words only embeds to zero, which has no direction to compare. */
export function isZero(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return false;
  return true;
}
