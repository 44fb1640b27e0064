import {
  commonEnv,
  hostPort,
  intEnv,
  loadConfig,
  metricsEnv,
  requiredUnlessEmbedded,
  serverUrl,
  z,
} from '@support-agent/shared';

/**
 * Environment of the answers service (docs/configuration.md). Each backend URL selects the
 * real adapter; an unset one selects the embedded adapter, allowed only with EMBEDDED=true
 * (what `npm start` sets), so a service deployed without MYSQL_URL refuses to start.
 */
export const configSchema = z
  .object({
    ANSWERS_ADDR: hostPort
      .prefault('127.0.0.1:50053')
      .describe('host:port of the gRPC listener (port 0 picks a free one).'),
    KNOWLEDGE_ADDR: hostPort
      .prefault('127.0.0.1:50052')
      .describe('The knowledge service, searched for every answer.'),
    TICKETS_ADDR: hostPort
      .prefault('127.0.0.1:50051')
      .describe('The tickets service, told the triage result (ApplyTriage).'),
    MYSQL_URL: serverUrl(['mysql:'])
      .optional()
      .describe('mysql://user:pass@host:port/db: deflection ledger and org policies.'),
    NATS_URL: serverUrl(['nats:', 'tls:'])
      .optional()
      .describe('nats://host:port[,nats://…]: ticket events, durable consumer answers-triage.'),
    OPENAI_API_KEY: z
      .string()
      .optional()
      .describe(
        'With OPENAI_BASE_URL or alone: the `openai` client answers and labels; unset = built-in providers.',
      ),
    OPENAI_BASE_URL: serverUrl(['http:', 'https:'])
      .optional()
      .describe(
        'Any OpenAI-compatible server (https://api.openai.com/v1 when only the key is set).',
      ),
    ANSWERS_MODEL: z
      .string()
      .min(1)
      .default('gpt-4o-mini')
      .describe('Chat model of the answers and labels.'),
    LLM_TIMEOUT_MS: intEnv(100, 300_000, 8_000).describe(
      'Time budget of one LLM step (answer or labels), retries included; then the built-in provider answers.',
    ),
    LLM_MAX_RETRIES: intEnv(0, 10, 2).describe(
      'Retries of one LLM call after 429, 5xx, timeouts and connection errors.',
    ),
    LLM_BREAKER_FAILURES: intEnv(1, 1_000, 5).describe(
      'Consecutive LLM failures that open the circuit breaker …',
    ),
    LLM_BREAKER_OPEN_MS: intEnv(100, 3_600_000, 30_000).describe(
      '… for this long (the built-in providers answer meanwhile).',
    ),
    ...commonEnv,
    RESERVATION_TTL_MS: intEnv(1_000, 24 * 3_600_000, 120_000).describe(
      'A deflection slot reserved by a generation that never finished (crash) is released after this.',
    ),
    GRPC_DEADLINE_MS: intEnv(100, 120_000, 5_000).describe(
      'Deadline of each call to knowledge and tickets.',
    ),
    TRIAGE_CONCURRENCY: intEnv(1, 64, 4).describe('Ticket events triaged at the same time.'),
    TRIAGE_ACK_WAIT_MS: intEnv(1_000, 3_600_000, 30_000).describe(
      'JetStream redelivers an event not acknowledged within this (progress is signalled while an LLM works).',
    ),
    NATS_STREAM_REPLICAS: intEnv(1, 5, 1).describe(
      'Replicas of the ticket events stream if this service is the one creating it (3 on a NATS cluster).',
    ),
    MYSQL_POOL_SIZE: intEnv(1, 500, 20).describe('Connections in the MySQL pool.'),
    SHUTDOWN_GRACE_MS: intEnv(0, 120_000, 10_000).describe(
      'In-flight calls and triage get this long to finish at shutdown.',
    ),
    ...metricsEnv,
  })
  .superRefine(requiredUnlessEmbedded(['MYSQL_URL', 'NATS_URL']));

export type AnswersConfig = z.infer<typeof configSchema>;

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadAnswersConfig(env: NodeJS.ProcessEnv = process.env): AnswersConfig {
  return loadConfig(configSchema, env, { service: 'answers' });
}

/** True when an OpenAI-compatible server is configured (DESIGN.md "LLM and embeddings"). */
export function llmConfigured(config: AnswersConfig): boolean {
  return config.OPENAI_API_KEY !== undefined || config.OPENAI_BASE_URL !== undefined;
}
