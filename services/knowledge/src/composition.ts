import { join, resolve } from 'node:path';
import type { Logger } from '@support-agent/shared';
import { usesOpenAI, type KnowledgeConfig } from './config.js';
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
  if (!usesOpenAI(config))
    return new HashedEmbeddings(config.embeddingsDimensions ?? HASHED_DEFAULT_DIMENSIONS);
  return OpenAIEmbeddings.create({
    apiKey: config.openaiApiKey,
    baseURL: config.openaiBaseUrl,
    model: config.embeddingsModel,
    dimensions: config.embeddingsDimensions,
    timeoutMs: config.embeddingsTimeoutMs,
    maxRetries: config.embeddingsMaxRetries,
    batchSize: config.embeddingsBatchSize,
    logger,
  });
}

export async function createBackend(config: KnowledgeConfig, logger: Logger): Promise<Backend> {
  const embeddings = await createEmbeddings(config, logger);
  const collection = collectionName(config.collectionPrefix, embeddings.fingerprint);
  if (config.qdrantUrl !== undefined) {
    const client = createQdrantClient({
      url: config.qdrantUrl,
      apiKey: config.qdrantApiKey,
      timeoutMs: config.qdrantTimeoutMs,
    });
    return {
      embeddings,
      index: new QdrantIndex({ client, collection, fingerprint: embeddings.fingerprint, logger }),
      catalog: new QdrantCatalog(client, config.collectionPrefix, logger),
      kind: 'qdrant',
    };
  }
  const dir = join(resolve(config.dataDir), 'knowledge');
  return {
    embeddings,
    index: new EmbeddedIndex({
      dir,
      collection,
      dimensions: embeddings.fingerprint.dimensions,
      logger,
    }),
    catalog: new EmbeddedCatalog(dir, config.collectionPrefix, logger),
    kind: 'embedded',
  };
}
