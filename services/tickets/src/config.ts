import {
  backendUrl,
  intEnv,
  serviceAddr,
  serviceConfig,
  sharedSetting,
  type z,
} from '@support-agent/shared';

/** Environment of the tickets service (docs/configuration.md). */
export const { schema: configSchema, load: loadTicketsConfig } = serviceConfig(
  'tickets',
  {
    TICKETS_ADDR: serviceAddr(
      'tickets',
      'host:port of the gRPC listener (0.0.0.0:50051 in containers; port 0 picks one).',
    ),
    MYSQL_URL: backendUrl.mysql('tickets, outbox, triage log, cursor secret.'),
    REDIS_URL: backendUrl.redis('idempotency lock and cache (speed, not correctness).'),
    REDIS_COMMAND_TIMEOUT_MS: sharedSetting.redisCommandTimeout(),
    NATS_URL: backendUrl.nats('JetStream, where ticket events are published.'),
    MYSQL_POOL_SIZE: sharedSetting.mysqlPoolSize(20),
    CREATE_BATCH: intEnv(1, 1_000, 100).describe(
      'Creates written together in one shared transaction at most (1: each create on its own).',
    ),
    OUTBOX_BATCH: intEnv(1, 1_000, 100).describe('Outbox events per relay batch.'),
    OUTBOX_POLL_MS: intEnv(10, 60_000, 250).describe(
      'Relay poll interval when idle (a local write wakes it at once).',
    ),
    OUTBOX_LINGER_MS: intEnv(0, 1_000, 10).describe(
      'After a relay batch that was not full, wait this long before the next, so more events leave together (0: at once).',
    ),
    OUTBOX_MAX_BACKOFF_MS: intEnv(100, 60_000, 2_000).describe(
      'Longest back-off between relay retries while NATS is down.',
    ),
    OUTBOX_RETENTION_HOURS: intEnv(1, 24 * 365, 24).describe(
      'Published outbox rows are deleted after this many hours.',
    ),
    NATS_PUBLISH_TIMEOUT_MS: intEnv(100, 60_000, 5_000).describe(
      'How long a relay batch waits for its JetStream PubAcks (missing ones count as failed; the events are published again).',
    ),
    NATS_STREAM_REPLICAS: sharedSetting.streamReplicas(),
    IDEMPOTENCY_CACHE_TTL_HOURS: intEnv(1, 24 * 30, 24).describe(
      'How long an idempotency key → ticket id answer stays cached in Redis.',
    ),
    SHUTDOWN_GRACE_MS: sharedSetting.shutdownGrace('In-flight calls'),
  },
  ['MYSQL_URL', 'REDIS_URL', 'NATS_URL'],
);

export type TicketsConfig = z.infer<typeof configSchema>;
