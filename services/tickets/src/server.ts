import { join } from 'node:path';
import {
  createLogger,
  gracefulStop,
  HOUR_MS,
  openWithClosers,
  redactUrl,
  serveGrpc,
  type Closers,
  type GrpcServiceHandle,
  type Logger,
} from '@support-agent/shared';
import { tickets } from '@support-agent/proto';
import { eventFilePath, JetStreamEventPublisher, JsonlEventPublisher } from '@support-agent/events';
import type { TicketsConfig } from './config.js';
import { CursorCodec } from './domain/cursor.js';
import type {
  EventPublisher,
  IdempotencyStore,
  TicketRepository,
  TicketsDeps,
} from './domain/ports.js';
import { EmbeddedTicketRepository } from './data-access/embedded/ticket-repository.js';
import {
  InMemoryIdempotencyStore,
  RedisIdempotencyStore,
} from './data-access/idempotency-store.js';
import { MysqlTicketRepository } from './data-access/mysql/ticket-repository.js';
import { OutboxRelay } from './data-access/outbox-relay.js';
import { createTicketsHandlers } from './entry-points/grpc/tickets-handlers.js';

export type TicketsServer = GrpcServiceHandle;

interface Adapters {
  repo: TicketRepository;
  idempotency: IdempotencyStore;
  publisher: EventPublisher;
}

/**
 * Starts the tickets service: adapters chosen by the config, gRPC server with health, outbox
 * relay; at stop() the relay finishes its batch after in-flight calls finish.
 */
export async function start(
  config: TicketsConfig,
  logger: Logger = createLogger('tickets', config.LOG_LEVEL),
): Promise<TicketsServer> {
  return openWithClosers(logger, async (closers) => {
    const { repo, idempotency, publisher } = await openAdapters(config, logger, closers);
    const relay = new OutboxRelay(repo, publisher, logger, {
      batchSize: config.OUTBOX_BATCH,
      pollMs: config.OUTBOX_POLL_MS,
      lingerMs: config.OUTBOX_LINGER_MS,
      maxBackoffMs: config.OUTBOX_MAX_BACKOFF_MS,
      retentionMs: config.OUTBOX_RETENTION_HOURS * HOUR_MS,
    });
    const deps: TicketsDeps = {
      repo,
      idempotency,
      cursors: new CursorCodec(await repo.cursorSecret()),
      eventsWritten: () => relay.notify(),
      now: () => new Date(),
    };
    const grpc = await serveGrpc('tickets', config.TICKETS_ADDR, logger, {
      definition: tickets.TicketsServiceService,
      implementation: createTicketsHandlers(deps, logger),
    });
    relay.start();
    closers.push(() => relay.stop());
    return {
      port: grpc.port,
      stop: gracefulStop('tickets', grpc, config.SHUTDOWN_GRACE_MS, closers),
    };
  });
}

/** Real adapters where a URL is set, embedded ones otherwise (config guarantees EMBEDDED then). */
async function openAdapters(
  config: TicketsConfig,
  logger: Logger,
  closers: Closers,
): Promise<Adapters> {
  const dataDir = config.DATA_DIR;

  let repo: TicketRepository;
  if (config.MYSQL_URL) {
    logger.info({ mysql: redactUrl(config.MYSQL_URL) }, 'tickets store: MySQL');
    repo = await MysqlTicketRepository.open(config.MYSQL_URL, logger, {
      poolSize: config.MYSQL_POOL_SIZE,
      createBatch: config.CREATE_BATCH,
    });
  } else {
    repo = EmbeddedTicketRepository.open(join(dataDir, 'tickets'), logger);
  }
  closers.push(() => repo.close());

  let idempotency: IdempotencyStore;
  if (config.REDIS_URL) {
    idempotency = await RedisIdempotencyStore.connect(config.REDIS_URL, logger, {
      cacheTtlMs: config.IDEMPOTENCY_CACHE_TTL_HOURS * HOUR_MS,
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    });
  } else {
    idempotency = new InMemoryIdempotencyStore(config.IDEMPOTENCY_CACHE_TTL_HOURS * HOUR_MS);
  }
  closers.push(() => idempotency.close());

  let publisher: EventPublisher;
  if (config.NATS_URL) {
    publisher = new JetStreamEventPublisher(config.NATS_URL, logger, {
      publishTimeoutMs: config.NATS_PUBLISH_TIMEOUT_MS,
      replicas: config.NATS_STREAM_REPLICAS,
    });
  } else {
    publisher = new JsonlEventPublisher(eventFilePath(dataDir), logger);
    logger.info({ file: eventFilePath(dataDir) }, 'events: embedded JSONL file');
  }
  closers.push(() => publisher.close());

  return { repo, idempotency, publisher };
}
