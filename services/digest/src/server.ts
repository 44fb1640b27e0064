import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  createLogger,
  gracefulStop,
  openAiConfigured,
  openWithClosers,
  serveGrpc,
  serveMetrics,
  type ClockOptions,
  type GrpcServiceHandle,
  type Logger,
} from '@support-agent/shared';
import { digest } from '@support-agent/proto';
import {
  DIGEST_CONSUMER,
  openTicketEventSource,
  type TicketEventSource,
} from '@support-agent/events';
import { digestSettings, metricsPort, scheduleOffset, type DigestConfig } from './config.js';
import { buildDigest, type BuildDigestDeps } from './domain/build-digest.js';
import type { DigestRepository } from './domain/ports.js';
import { EmbeddedDigestRepository } from './data-access/embedded/digest-repository.js';
import { FallbackEmbedder, KnowledgePorts } from './data-access/knowledge-client.js';
import { LexicalEmbeddings } from './data-access/lexical-embeddings.js';
import { MysqlDigestRepository } from './data-access/mysql/digest-repository.js';
import { OpenAiSummarizer } from './data-access/openai-summarizer.js';
import { TicketEventsConsumer } from './entry-points/events/ticket-events-consumer.js';
import { createDigestHandlers } from './entry-points/grpc/digest-handlers.js';
import { DigestMetrics } from './entry-points/metrics.js';
import { WeeklyDigestScheduler } from './entry-points/scheduler.js';

export interface DigestServer extends GrpcServiceHandle {
  /** The bound metrics port, undefined when METRICS_PORT (or DIGEST_METRICS_PORT) is 0. */
  metricsPort: number | undefined;
}

/** Starts the digest service: store and event source chosen by the config, gRPC + health, consumer, scheduler, metrics. */
export async function start(
  config: DigestConfig,
  logger: Logger = createLogger('digest', config.LOG_LEVEL),
  options: ClockOptions = {},
): Promise<DigestServer> {
  const now = options.now ?? (() => new Date());
  return openWithClosers(logger, async (closers) => {
    const metrics = new DigestMetrics();
    const repo = await openRepository(config, logger);
    closers.push(() => repo.close());

    const knowledge = new KnowledgePorts(config.KNOWLEDGE_ADDR.address, config.GRPC_DEADLINE_MS);
    closers.push(() => knowledge.close());
    const buildDeps: BuildDigestDeps = {
      store: repo,
      embedder: new FallbackEmbedder(
        config.DIGEST_EMBEDDINGS === 'auto' ? knowledge : undefined,
        new LexicalEmbeddings(),
        logger,
      ),
      knowledge,
      summarizer: openAiConfigured(config)
        ? new OpenAiSummarizer({
            apiKey: config.OPENAI_API_KEY,
            baseURL: config.OPENAI_BASE_URL,
            model: config.DIGEST_MODEL,
          })
        : undefined,
      settings: digestSettings(config),
      logger,
      now,
    };
    const build = (orgId: string, weekStart: string) => buildDigest(buildDeps, orgId, weekStart);

    const grpc = await serveGrpc('digest', config.DIGEST_ADDR, logger, {
      definition: digest.DigestServiceService,
      implementation: createDigestHandlers({ store: repo, build, metrics, logger, now }),
    });
    closers.push(() => grpc.stop(config.SHUTDOWN_GRACE_MS));

    const consumer = new TicketEventsConsumer(
      openEventSource(config, logger),
      repo,
      metrics,
      logger,
    );
    consumer.start();
    closers.push(() => consumer.stop());
    const lagTimer = setInterval(
      () => void consumer.refreshLag().catch(() => undefined),
      config.DIGEST_LAG_POLL_MS,
    );
    lagTimer.unref();
    closers.push(() => clearInterval(lagTimer));

    if (config.DIGEST_SCHEDULER_ENABLED) {
      const scheduler = new WeeklyDigestScheduler(
        { store: repo, build, backlog: () => consumer.refreshLag(), metrics, logger },
        {
          holder: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
          tickMs: config.DIGEST_SCHEDULER_TICK_MS,
          offsetMinutes: scheduleOffset(config),
          leaseTtlMs: config.DIGEST_LEASE_TTL_MS,
          runStaleMs: config.DIGEST_RUN_STALE_MS,
          maxLagWaitMs: config.DIGEST_SCHEDULE_MAX_LAG_WAIT_MS,
        },
      );
      scheduler.start();
      closers.push(() => scheduler.stop());
    }

    // GET /metrics: shared's process-wide registry (gRPC, process) plus this instance's.
    const endpoint = await serveMetrics(
      { port: metricsPort(config), host: config.METRICS_HOST },
      logger,
      [metrics.registry],
    );
    if (endpoint) closers.push(() => endpoint.close());

    // Readiness fails first and in-flight calls drain; then the closers run in reverse order:
    // metrics, scheduler, lag poll, consumer (after its in-flight event), knowledge, store.
    return {
      port: grpc.port,
      metricsPort: endpoint?.port,
      stop: gracefulStop('digest', grpc, config.SHUTDOWN_GRACE_MS, closers),
    };
  });
}

/** MySQL when MYSQL_URL is set, the embedded journal otherwise (config guarantees EMBEDDED then). */
export async function openRepository(
  config: DigestConfig,
  logger: Logger,
): Promise<DigestRepository> {
  if (config.MYSQL_URL)
    return MysqlDigestRepository.open(config.MYSQL_URL, logger, {
      poolSize: config.MYSQL_POOL_SIZE,
    });
  return EmbeddedDigestRepository.open(join(config.DATA_DIR, 'digest'), logger);
}

function openEventSource(config: DigestConfig, logger: Logger): TicketEventSource {
  return openTicketEventSource(
    {
      consumer: { ...DIGEST_CONSUMER, name: config.DIGEST_CONSUMER_NAME },
      natsUrl: config.NATS_URL,
      dataDir: config.DATA_DIR,
      concurrency: config.DIGEST_CONSUMER_CONCURRENCY,
      batchSize: config.DIGEST_CONSUMER_BATCH,
      lingerMs: config.DIGEST_CONSUMER_LINGER_MS,
      ackWaitMs: config.DIGEST_ACK_WAIT_MS,
      replicas: config.NATS_STREAM_REPLICAS,
      pullExpiresMs: config.DIGEST_PULL_EXPIRES_MS,
      // The embedded store applies one line after the other; the offset is saved every 100
      // lines: lines handled again after a crash are recognised by event id.
      file: {
        offsetFile: join(config.DATA_DIR, 'digest', 'events.offset'),
        concurrency: 1,
        batchSize: config.DIGEST_CONSUMER_BATCH,
        saveEvery: 100,
      },
    },
    logger,
  );
}
