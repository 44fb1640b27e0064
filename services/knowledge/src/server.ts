import {
  assertRunnable,
  createLogger,
  gracefulStop,
  openWithClosers,
  startGrpcServer,
  type GrpcServiceHandle,
  type Logger,
} from '@support-agent/shared';
import { knowledge } from '@support-agent/proto';
import { REQUIRED_BACKENDS, type KnowledgeConfig } from './config.js';
import { createBackend } from './composition.js';
import { fingerprintKey } from './domain/fingerprint.js';
import type { KnowledgeDeps } from './domain/search.js';
import { embeddingsHandlers, knowledgeHandlers } from './entry-points/grpc/knowledge-handlers.js';

export interface KnowledgeServer extends GrpcServiceHandle {
  /** The collection in use; its name carries the embedding fingerprint. */
  collection: string;
}

/** Starts the knowledge service: adapters from config, collection ensured, gRPC + health. */
export async function start(
  config: KnowledgeConfig,
  logger: Logger = createLogger('knowledge', config.LOG_LEVEL),
): Promise<KnowledgeServer> {
  assertRunnable(config, REQUIRED_BACKENDS);
  return openWithClosers(logger, async (closers) => {
    const backend = await createBackend(config, logger);
    const { index, embeddings, catalog } = backend;
    await index.init();
    closers.push(() => index.close());

    const others = (await catalog.list()).filter((c) => c !== index.collection);
    if (others.length > 0) {
      logger.warn(
        { collection: index.collection, others },
        'collections of other embedding fingerprints exist: run `node services/knowledge/dist/cli/reindex.js` to move their entries here',
      );
    }

    const deps: KnowledgeDeps = { index, embeddings, logger, now: Date.now };
    const grpc = await startGrpcServer({
      host: config.KNOWLEDGE_ADDR.host,
      port: config.KNOWLEDGE_ADDR.port,
      services: [
        { definition: knowledge.KnowledgeServiceService, implementation: knowledgeHandlers(deps) },
        {
          definition: knowledge.EmbeddingsServiceService,
          implementation: embeddingsHandlers(deps),
        },
      ],
      logger,
    });
    logger.info(
      {
        port: grpc.port,
        backend: backend.kind,
        collection: index.collection,
        embeddings: fingerprintKey(embeddings.fingerprint),
      },
      'knowledge service listening',
    );
    return {
      port: grpc.port,
      collection: index.collection,
      stop: gracefulStop('knowledge', grpc, config.SHUTDOWN_GRACE_MS, closers),
    };
  });
}
