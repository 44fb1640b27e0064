import {
  boolFlag,
  commonEnv,
  hostPort,
  intEnv,
  loadConfig,
  metricsEnv,
  port,
  requiredUnlessEmbedded,
  serverUrl,
  unitEnv,
  z,
} from '@support-agent/shared';
import { DIGEST_CONSUMER } from '@support-agent/events';
import { scheduleOffsetMinutes, WEEK_MINUTES, WEEKDAYS } from './domain/schedule.js';

/**
 * Environment of the digest service (docs/configuration.md). Each backend URL selects the real adapter;
 * an unset one selects the embedded adapter, allowed only with EMBEDDED=true
 * (what `npm start` sets), so a service deployed without MYSQL_URL refuses to start.
 */
export const configSchema = z
  .object({
    DIGEST_ADDR: hostPort
      .prefault('127.0.0.1:50054')
      .describe('host:port of the gRPC listener; port 0 picks a free one (tests).'),
    KNOWLEDGE_ADDR: hostPort
      .prefault('127.0.0.1:50052')
      .describe(
        'The knowledge service: Search (topic answers) and EmbeddingsService.Embed (topic grouping).',
      ),
    MYSQL_URL: serverUrl(['mysql:'])
      .optional()
      .describe('mysql://user:pass@host:port/db — aggregates, digests, schedule lease and runs.'),
    NATS_URL: serverUrl(['nats:', 'tls:'])
      .optional()
      .describe(
        'nats://host:port[,nats://…] — ticket events, durable consumer DIGEST_CONSUMER_NAME (packages/events).',
      ),
    OPENAI_API_KEY: z
      .string()
      .optional()
      .describe(
        'With OPENAI_BASE_URL or alone: the `openai` client writes the topic answers; unset = extractive.',
      ),
    OPENAI_BASE_URL: serverUrl(['http:', 'https:'])
      .optional()
      .describe(
        'Any OpenAI-compatible server (https://api.openai.com/v1 when only the key is set).',
      ),
    DIGEST_MODEL: z
      .string()
      .min(1)
      .default('gpt-4o-mini')
      .describe('Chat model of the topic answers.'),
    DIGEST_LLM_TIMEOUT_MS: intEnv(100, 300_000, 8_000).describe(
      'Time budget of the LLM summary of one digest; then the extractive answers stay.',
    ),
    ...commonEnv,

    DIGEST_SCHEDULE_DAY: z
      .enum(WEEKDAYS)
      .default('mon')
      .describe(
        'The weekly run: first `DIGEST_SCHEDULE_DAY` at `DIGEST_SCHEDULE_TIME` (UTC) after a week ends …',
      ),
    DIGEST_SCHEDULE_TIME: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (UTC, 24-hour)')
      .default('00:05')
      .describe('… at this time of day (HH:MM, UTC).'),
    DIGEST_SCHEDULE_OFFSET_MINUTES: z.coerce
      .number()
      .int()
      .min(0)
      .max(WEEK_MINUTES - 1)
      .optional()
      .describe(
        '… or simply this many minutes after the week ends (Monday 00:00 UTC); wins when set.',
      ),
    DIGEST_SCHEDULER_ENABLED: boolFlag
      .default(true)
      .describe(
        'Whether this replica takes part in the weekly run (false: builds only on request).',
      ),
    DIGEST_SCHEDULER_TICK_MS: intEnv(10, 3_600_000, 30_000).describe(
      'How often each replica checks whether the due weekly run happened.',
    ),
    DIGEST_LEASE_TTL_MS: intEnv(100, 3_600_000, 60_000).describe(
      'The scheduler lease lasts this long unless renewed (renewed every third of it during a run).',
    ),
    DIGEST_RUN_STALE_MS: intEnv(100, 24 * 3_600_000, 600_000).describe(
      'An unfinished run whose heartbeat is older than this (its replica died) is run again.',
    ),
    DIGEST_SCHEDULE_MAX_LAG_WAIT_MS: intEnv(0, 24 * 3_600_000, 900_000).describe(
      'After the due time, the run waits for the event consumer to catch up at most this long.',
    ),

    ...metricsEnv,
    DIGEST_METRICS_PORT: port
      .optional()
      .describe(
        'The former name of METRICS_PORT, still honoured (and preferred when both are set).',
      ),
    DIGEST_CONSUMER_NAME: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, - and _ only')
      .default(DIGEST_CONSUMER.name)
      .describe('Durable consumer name on the ticket events stream.'),
    DIGEST_CONSUMER_CONCURRENCY: intEnv(1, 32, 4).describe(
      "Events applied at the same time. 4: one at a time left the consumer waiting on each event's round trips and commit; 4 worked a backlog off 20–30 % faster, with less CPU per event (bench/drain-path.ts, docs/performance.md).",
    ),
    DIGEST_ACK_WAIT_MS: intEnv(1_000, 3_600_000, 30_000).describe(
      'JetStream redelivers an event not acknowledged within this.',
    ),
    DIGEST_PULL_EXPIRES_MS: intEnv(1_000, 60_000, 2_000).describe(
      'How long one pull waits for an event (and the longest stop() waits for an idle pull).',
    ),
    DIGEST_LAG_POLL_MS: intEnv(100, 600_000, 5_000).describe(
      'How often consumer lag (digest_consumer_pending) is refreshed.',
    ),
    NATS_STREAM_REPLICAS: intEnv(1, 5, 1).describe(
      'Replicas of the ticket events stream if this service is the one creating it (3 on a NATS cluster).',
    ),

    DIGEST_EMBEDDINGS: z
      .enum(['auto', 'lexical'])
      .default('auto')
      .describe(
        "`auto`: knowledge's EmbeddingsService, falling back to the built-in lexical embeddings; `lexical`: built-in only.",
      ),
    DIGEST_TOPIC_THRESHOLD: z.coerce
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe(
        "Average-linkage similarity (half embedding cosine, half KB hit-profile cosine; the embedding alone without hits) at which questions and topics merge; unset = a default per vector space, each the best pairwise F1 on the StackFAQ dev weeks (docs/answer-quality.md): 0.25 with knowledge's hashed embeddings, 0.3 for the built-in lexical ones (used when knowledge is down, so embeddings alone).",
      ),
    DIGEST_TOPIC_THRESHOLD_LEXICAL: unitEnv(0.3).describe(
      'The merge threshold with the built-in lexical embeddings (DIGEST_TOPIC_THRESHOLD unset).',
    ),
    DIGEST_TOPIC_THRESHOLD_HASHED: unitEnv(0.25).describe(
      "The merge threshold with knowledge's hashed embeddings (DIGEST_TOPIC_THRESHOLD unset).",
    ),
    DIGEST_TOPIC_THRESHOLD_DENSE: unitEnv(0.5).describe(
      'Not measured here (no learned model runs in this environment): dense cosines run higher.',
    ),
    DIGEST_TOP_TOPICS: intEnv(1, 100, 10).describe('Topics shown with their answers.'),
    DIGEST_CHECKED_TOPICS: intEnv(1, 200, 25).describe(
      'Unanswered topics listed in the Markdown, biggest first (the rest are counted).',
    ),
    DIGEST_KB_SCORE_FLOOR: unitEnv(0.7).describe(
      "Confidence a KB topic needs to anchor the week's questions: 1 − Π(1 − score) over the questions that match it best (a question then joins with half of it); the rest are clustered as unanswered. The one knob to retune when knowledge's scores change: `npm run eval:digest -- --floor <x>` (docs/answer-quality.md).",
    ),
    DIGEST_SEARCH_DEPTH: intEnv(1, 20, 10).describe(
      'KB hits per question taken as its candidate topics.',
    ),
    DIGEST_SEARCH_CONCURRENCY: intEnv(1, 64, 4).describe(
      'KB searches in flight at once while a digest is built.',
    ),
    DIGEST_MAX_TICKETS: intEnv(1, 100_000, 1_000).describe(
      'Tickets of one week grouped into topics (the total always counts every ticket).',
    ),
    GRPC_DEADLINE_MS: intEnv(100, 120_000, 5_000).describe('Deadline of each call to knowledge.'),
    MYSQL_POOL_SIZE: intEnv(1, 500, 10).describe('Connections in the MySQL pool.'),
    SHUTDOWN_GRACE_MS: intEnv(0, 120_000, 10_000).describe(
      'In-flight calls and the in-flight event get this long to finish at shutdown.',
    ),
  })
  .superRefine(requiredUnlessEmbedded(['MYSQL_URL', 'NATS_URL']));

export type DigestConfig = z.infer<typeof configSchema>;

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadDigestConfig(env: NodeJS.ProcessEnv = process.env): DigestConfig {
  return loadConfig(configSchema, env, { service: 'digest' });
}

/** The metrics port in force: DIGEST_METRICS_PORT when set, else METRICS_PORT (0 = off). */
export function metricsPort(config: DigestConfig): number {
  return config.DIGEST_METRICS_PORT ?? config.METRICS_PORT;
}

/** True when an OpenAI-compatible server is configured (DESIGN.md "LLM and embeddings"). */
export function llmConfigured(config: DigestConfig): boolean {
  return config.OPENAI_API_KEY !== undefined || config.OPENAI_BASE_URL !== undefined;
}

/** Minutes after a week's end at which its automatic run is due. */
export function scheduleOffset(config: DigestConfig): number {
  return (
    config.DIGEST_SCHEDULE_OFFSET_MINUTES ??
    scheduleOffsetMinutes(config.DIGEST_SCHEDULE_DAY, config.DIGEST_SCHEDULE_TIME)
  );
}
