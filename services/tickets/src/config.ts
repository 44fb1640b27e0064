import { boolFlag, hostPort, loadConfig, logLevel, metricsEnv, z } from '@support-agent/shared';

const url = (scheme: string) =>
  z
    .string()
    .refine(
      (v) => v.split(',').every((s) => s.trim().startsWith(scheme)),
      `expected a ${scheme} URL`,
    )
    .optional();

const positiveInt = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/**
 * Environment of the tickets service. Each backend URL selects the real adapter;
 * an unset one selects the embedded adapter, allowed only with EMBEDDED=true
 * (what `npm start` sets), so a service deployed without MYSQL_URL refuses to start.
 */
export const configSchema = z
  .object({
    /** host:port of the gRPC listener; 0.0.0.0:50051 in containers, port 0 picks a free one. */
    TICKETS_ADDR: hostPort.prefault('127.0.0.1:50051'),
    /** mysql://user:pass@host:port/db — tickets, outbox, triage log, cursor secret. */
    MYSQL_URL: url('mysql://'),
    /** redis://host:port — idempotency lock and cache (optional for correctness, not for speed). */
    REDIS_URL: url('redis'),
    /** nats://host:port[,nats://…] — JetStream, where ticket events are published (packages/events). */
    NATS_URL: url('nats://'),
    /** Allow embedded adapters for unset backend URLs. */
    EMBEDDED: boolFlag.default(false),
    /** Where embedded adapters keep their files (tickets/ and events/). */
    DATA_DIR: z.string().default('./data'),
    LOG_LEVEL: logLevel,
    MYSQL_POOL_SIZE: positiveInt(1, 500, 20),
    /** Outbox events per relay batch. */
    OUTBOX_BATCH: positiveInt(1, 1_000, 100),
    /** Relay poll interval when idle (a local write wakes it at once). */
    OUTBOX_POLL_MS: positiveInt(10, 60_000, 250),
    /** Longest back-off between relay retries while NATS is down. */
    OUTBOX_MAX_BACKOFF_MS: positiveInt(100, 60_000, 2_000),
    /** Published outbox rows are deleted after this many hours. */
    OUTBOX_RETENTION_HOURS: positiveInt(1, 24 * 365, 24),
    /** Wait for each JetStream PubAck this long. */
    NATS_PUBLISH_TIMEOUT_MS: positiveInt(100, 60_000, 5_000),
    /** Replicas of the ticket events stream when this service creates it (3 on a NATS cluster). */
    NATS_STREAM_REPLICAS: positiveInt(1, 5, 1),
    /** How long an idempotency key → ticket id answer stays cached in Redis. */
    IDEMPOTENCY_CACHE_TTL_HOURS: positiveInt(1, 24 * 30, 24),
    /** In-flight calls get this long to finish at shutdown before they are cut. */
    SHUTDOWN_GRACE_MS: positiveInt(0, 120_000, 10_000),
    /** Prometheus GET /metrics (METRICS_PORT, 0 = off; METRICS_HOST, default 127.0.0.1). */
    ...metricsEnv,
  })
  .superRefine((c, ctx) => {
    if (c.EMBEDDED) return;
    for (const name of ['MYSQL_URL', 'REDIS_URL', 'NATS_URL'] as const) {
      if (c[name] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `${name} is required (set it, or EMBEDDED=true to use the embedded adapter)`,
        });
      }
    }
  });

export type TicketsConfig = z.infer<typeof configSchema>;

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadTicketsConfig(env: NodeJS.ProcessEnv = process.env): TicketsConfig {
  return loadConfig(configSchema, env, { service: 'tickets' });
}
