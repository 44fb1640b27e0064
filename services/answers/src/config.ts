import { boolFlag, hostPort, loadConfig, logLevel, metricsEnv, z } from '@support-agent/shared';

const url = (schemes: string[]) =>
  z
    .string()
    .refine(
      (v) => v.split(',').every((s) => schemes.some((scheme) => s.trim().startsWith(scheme))),
      `expected a ${schemes.join(' or ')} URL`,
    )
    .optional();

const int = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/**
 * Environment of the answers service. Each backend URL selects the real adapter;
 * an unset one selects the embedded adapter, allowed only with EMBEDDED=true
 * (what `npm start` sets), so a service deployed without MYSQL_URL refuses to start.
 */
export const configSchema = z
  .object({
    /** host:port of the gRPC listener; port 0 picks a free one (tests). */
    ANSWERS_ADDR: hostPort.prefault('127.0.0.1:50053'),
    /** The knowledge service, searched for every answer. */
    KNOWLEDGE_ADDR: hostPort.prefault('127.0.0.1:50052'),
    /** The tickets service, told the triage result (ApplyTriage). */
    TICKETS_ADDR: hostPort.prefault('127.0.0.1:50051'),
    /** mysql://user:pass@host:port/db — deflection ledger and org policies. */
    MYSQL_URL: url(['mysql://']),
    /** nats://host:port[,nats://…] — ticket events, durable consumer answers-triage (packages/events). */
    NATS_URL: url(['nats://', 'tls://']),
    /** With OPENAI_BASE_URL or alone: the `openai` client answers and labels; unset = built-in providers. */
    OPENAI_API_KEY: z.string().optional(),
    /** Any OpenAI-compatible server (https://api.openai.com/v1 when only the key is set). */
    OPENAI_BASE_URL: url(['http://', 'https://']),
    ANSWERS_MODEL: z.string().min(1).default('gpt-4o-mini'),
    /** Time budget of one LLM step (answer or labels), retries included; then the built-in provider answers. */
    LLM_TIMEOUT_MS: int(100, 300_000, 8_000),
    /** Retries of one LLM call after 429, 5xx, timeouts and connection errors. */
    LLM_MAX_RETRIES: int(0, 10, 2),
    /** Consecutive LLM failures that open the circuit breaker … */
    LLM_BREAKER_FAILURES: int(1, 1_000, 5),
    /** … for this long (the built-in providers answer meanwhile). */
    LLM_BREAKER_OPEN_MS: int(100, 3_600_000, 30_000),
    /** Allow embedded adapters for unset backend URLs. */
    EMBEDDED: boolFlag.default(false),
    /** Where embedded adapters keep their files (answers/) and read ticket events (events/). */
    DATA_DIR: z.string().default('./data'),
    LOG_LEVEL: logLevel,
    /** A deflection slot reserved by a generation that never finished (crash) is released after this. */
    RESERVATION_TTL_MS: int(1_000, 24 * 3_600_000, 120_000),
    /** Deadline of each call to knowledge and tickets. */
    GRPC_DEADLINE_MS: int(100, 120_000, 5_000),
    /** Ticket events triaged at the same time. */
    TRIAGE_CONCURRENCY: int(1, 64, 4),
    /** JetStream redelivers an event not acknowledged within this (progress is signalled while an LLM works). */
    TRIAGE_ACK_WAIT_MS: int(1_000, 3_600_000, 30_000),
    /** Replicas of the ticket events stream if this service is the one creating it (3 on a NATS cluster). */
    NATS_STREAM_REPLICAS: int(1, 5, 1),
    MYSQL_POOL_SIZE: int(1, 500, 20),
    /** In-flight calls and triage get this long to finish at shutdown. */
    SHUTDOWN_GRACE_MS: int(0, 120_000, 10_000),
    /** Prometheus GET /metrics (METRICS_PORT, 0 = off; METRICS_HOST, default 127.0.0.1). */
    ...metricsEnv,
  })
  .superRefine((c, ctx) => {
    if (c.EMBEDDED) return;
    for (const name of ['MYSQL_URL', 'NATS_URL'] as const) {
      if (c[name] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `${name} is required (set it, or EMBEDDED=true to use the embedded adapter)`,
        });
      }
    }
  });

export type AnswersConfig = z.infer<typeof configSchema>;

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadAnswersConfig(env: NodeJS.ProcessEnv = process.env): AnswersConfig {
  return loadConfig(configSchema, env, { service: 'answers' });
}

/** True when an OpenAI-compatible server is configured (DESIGN.md "LLM and embeddings"). */
export function llmConfigured(config: AnswersConfig): boolean {
  return config.OPENAI_API_KEY !== undefined || config.OPENAI_BASE_URL !== undefined;
}
