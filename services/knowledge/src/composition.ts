import { join, resolve } from 'node:path';
import { openAiConfigured, type Logger } from '@support-agent/shared';
import type { KnowledgeConfig } from './config.js';
import { EmbeddedCatalog, EmbeddedIndex } from './data-access/embedded-index/index.js';
import { HashedEmbeddings, HASHED_DEFAULT_DIMENSIONS } from './data-access/hashed-embeddings.js';
import { OpenAIEmbeddings } from './data-access/openai-embeddings.js';
import { createQdrantClient, QdrantCatalog, QdrantIndex } from './data-access/qdrant-index.js';
import { collectionName } from './domain/fingerprint.js';
import type { EmbeddingProvider, IndexCatalog, KnowledgeIndex } from './domain/ports.js';

/** The adapters chosen by configuration: shared by the server and the re-index command. */
export interface Backend {
  embeddings: EmbeddingProvider;
  /** The collection of the current embedding fingerprint (not yet initialised). */
  index: KnowledgeIndex;
  catalog: IndexCatalog;
  kind: 'qdrant' | 'embedded';
}

export async function createEmbeddings(
  config: KnowledgeConfig,
  logger: Logger,
): Promise<EmbeddingProvider> {
  if (!openAiConfigured(config))
    return new HashedEmbeddings(config.EMBEDDINGS_DIMENSIONS ?? HASHED_DEFAULT_DIMENSIONS);
  return OpenAIEmbeddings.create({
    apiKey: config.OPENAI_API_KEY,
    baseURL: config.OPENAI_BASE_URL,
    model: config.EMBEDDINGS_MODEL,
    dimensions: config.EMBEDDINGS_DIMENSIONS,
    timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
    maxRetries: config.EMBEDDINGS_MAX_RETRIES,
    batchSize: config.EMBEDDINGS_BATCH_SIZE,
    logger,
  });
}

export async function createBackend(config: KnowledgeConfig, logger: Logger): Promise<Backend> {
  const embeddings = await createEmbeddings(config, logger);
  const collection = collectionName(config.QDRANT_COLLECTION_PREFIX, embeddings.fingerprint);
  if (config.QDRANT_URL !== undefined) {
    const client = createQdrantClient({
      url: config.QDRANT_URL,
      apiKey: config.QDRANT_API_KEY,
      timeoutMs: config.QDRANT_TIMEOUT_MS,
    });
    return {
      embeddings,
      index: new QdrantIndex({ client, collection, fingerprint: embeddings.fingerprint, logger }),
      catalog: new QdrantCatalog(client, config.QDRANT_COLLECTION_PREFIX, logger),
      kind: 'qdrant',
    };
  }
  const dir = join(resolve(config.DATA_DIR), 'knowledge');
  return {
    embeddings,
    index: new EmbeddedIndex({
      dir,
      collection,
      dimensions: embeddings.fingerprint.dimensions,
      logger,
    }),
    catalog: new EmbeddedCatalog(dir, config.QDRANT_COLLECTION_PREFIX, logger),
    kind: 'embedded',
  };
}
