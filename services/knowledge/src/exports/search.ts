// `@support-agent/knowledge/search`: knowledge's search run in process, for the tools outside
// the service (the offline evaluations and fitting of @support-agent/quality, scripts/): the
// embedded index, the built-in embeddings, indexing, the first stage and the reranker, exactly
// as the service runs them. The service itself never imports this file.
export { EmbeddedIndex } from '../data-access/embedded-index/index.js';
export { HashedEmbeddings } from '../data-access/hashed-embeddings.js';
export { collectionName, fingerprintKey } from '../domain/fingerprint.js';
export {
  checkRerankModel,
  competitorGaps,
  featureRows,
  rankingScore,
  rerank,
  RERANK_FEATURES,
  type FeatureRow,
  type RerankModel,
  type RerankStage,
} from '../domain/rerank.js';
export { queryTerms } from '../domain/scoring.js';
export { candidateCount, isZero, searchEntries, type KnowledgeDeps } from '../domain/search.js';
export { upsertEntries } from '../domain/upsert.js';
