import {
  boolFlag,
  hostPort,
  loadConfig,
  logLevel,
  metricsEnv,
  port,
  z,
} from '@support-agent/shared';
import { DIGEST_CONSUMER } from '@support-agent/events';
import { scheduleOffsetMinutes, WEEK_MINUTES, WEEKDAYS } from './domain/schedule.js';

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
const unit = (fallback: number) => z.coerce.number().min(0).max(1).default(fallback);

/**
 * Environment of the digest service. Each backend URL selects the real adapter;
 * an unset one selects the embedded adapter, allowed only with EMBEDDED=true
 * (what `npm start` sets), so a service deployed without MYSQL_URL refuses to start.
 */
export const configSchema = z
  .object({
    /** host:port of the gRPC listener; port 0 picks a free one (tests). */
    DIGEST_ADDR: hostPort.prefault('127.0.0.1:50054'),
    /** The knowledge service: Search (topic answers) and EmbeddingsService.Embed (topic grouping). */
    KNOWLEDGE_ADDR: hostPort.prefault('127.0.0.1:50052'),
    /** mysql://user:pass@host:port/db — aggregates, digests, schedule lease and runs. */
    MYSQL_URL: url(['mysql://']),
    /** nats://host:port[,nats://…] — ticket events, durable consumer DIGEST_CONSUMER_NAME (packages/events). */
    NATS_URL: url(['nats://', 'tls://']),
    /** With OPENAI_BASE_URL or alone: the `openai` client writes the topic answers; unset = extractive. */
    OPENAI_API_KEY: z.string().optional(),
    /** Any OpenAI-compatible server (https://api.openai.com/v1 when only the key is set). */
    OPENAI_BASE_URL: url(['http://', 'https://']),
    DIGEST_MODEL: z.string().min(1).default('gpt-4o-mini'),
    /** Time budget of the LLM summary of one digest; then the extractive answers stay. */
    DIGEST_LLM_TIMEOUT_MS: int(100, 300_000, 8_000),
    /** Allow embedded adapters for unset backend URLs. */
    EMBEDDED: boolFlag.default(false),
    /** Embedded files: digest/ (journal, event offset); events are read from events/tickets.jsonl. */
    DATA_DIR: z.string().default('./data'),
    LOG_LEVEL: logLevel,

    /** The weekly run: first `DIGEST_SCHEDULE_DAY` at `DIGEST_SCHEDULE_TIME` (UTC) after a week ends … */
    DIGEST_SCHEDULE_DAY: z.enum(WEEKDAYS).default('mon'),
    DIGEST_SCHEDULE_TIME: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (UTC, 24-hour)')
      .default('00:05'),
    /** … or simply this many minutes after the week ends (Monday 00:00 UTC); wins when set. */
    DIGEST_SCHEDULE_OFFSET_MINUTES: z.coerce
      .number()
      .int()
      .min(0)
      .max(WEEK_MINUTES - 1)
      .optional(),
    DIGEST_SCHEDULER_ENABLED: boolFlag.default(true),
    /** How often each replica checks whether the due weekly run happened. */
    DIGEST_SCHEDULER_TICK_MS: int(10, 3_600_000, 30_000),
    /** The scheduler lease lasts this long unless renewed (renewed every third of it during a run). */
    DIGEST_LEASE_TTL_MS: int(100, 3_600_000, 60_000),
    /** An unfinished run whose heartbeat is older than this (its replica died) is run again. */
    DIGEST_RUN_STALE_MS: int(100, 24 * 3_600_000, 600_000),
    /** After the due time, the run waits for the event consumer to catch up at most this long. */
    DIGEST_SCHEDULE_MAX_LAG_WAIT_MS: int(0, 24 * 3_600_000, 900_000),

    /** Prometheus `GET /metrics`: METRICS_PORT (0 disables it), METRICS_HOST (default 127.0.0.1). */
    ...metricsEnv,
    /** The former name of METRICS_PORT, still honoured (and preferred when both are set). */
    DIGEST_METRICS_PORT: port.optional(),
    /** Durable consumer name on the ticket events stream. */
    DIGEST_CONSUMER_NAME: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, - and _ only')
      .default(DIGEST_CONSUMER.name),
    /**
     * Events applied at the same time. 4: one at a time left the consumer waiting on each
     * event's round trips and commit; 4 worked a backlog off 20–30 % faster, with less CPU per
     * event (bench/drain-path.ts, docs/performance.md).
     */
    DIGEST_CONSUMER_CONCURRENCY: int(1, 32, 4),
    /** JetStream redelivers an event not acknowledged within this. */
    DIGEST_ACK_WAIT_MS: int(1_000, 3_600_000, 30_000),
    /** How long one pull waits for an event (and the longest stop() waits for an idle pull). */
    DIGEST_PULL_EXPIRES_MS: int(1_000, 60_000, 2_000),
    /** How often consumer lag (digest_consumer_pending) is refreshed. */
    DIGEST_LAG_POLL_MS: int(100, 600_000, 5_000),
    /** Replicas of the ticket events stream if this service is the one creating it (3 on a NATS cluster). */
    NATS_STREAM_REPLICAS: int(1, 5, 1),

    /** `auto`: knowledge's EmbeddingsService, falling back to the built-in lexical embeddings; `lexical`: built-in only. */
    DIGEST_EMBEDDINGS: z.enum(['auto', 'lexical']).default('auto'),
    /**
     * Average-linkage similarity at which questions and topics merge: embedding cosine + 2 ×
     * the probability that one KB topic answers both (Σ of products of their calibrated search
     * scores; the cosine alone without hits). Unset = a default per vector space: 0.6 with
     * knowledge's hashed embeddings (chosen on the StackFAQ dev weeks, docs/answer-quality.md),
     * 0.3 for the built-in lexical ones (used only when knowledge is down, so cosine alone).
     */
    DIGEST_TOPIC_THRESHOLD: z.coerce.number().min(0).max(3).optional(),
    DIGEST_TOPIC_THRESHOLD_LEXICAL: unit(0.3),
    DIGEST_TOPIC_THRESHOLD_HASHED: z.coerce.number().min(0).max(3).default(0.6),
    /** Not measured here (no learned model runs in this environment): dense cosines run higher. */
    DIGEST_TOPIC_THRESHOLD_DENSE: z.coerce.number().min(0).max(3).default(0.75),
    /** Topics shown with their answers. */
    DIGEST_TOP_TOPICS: int(1, 100, 10),
    /** Unanswered topics listed in the Markdown, biggest first (the rest are counted). */
    DIGEST_CHECKED_TOPICS: int(1, 200, 25),
    /**
     * Share of a topic's tickets its best KB entry must be expected to answer (its mean
     * calibrated search score over them) for the topic to be shown with that answer; below it
     * the topic is listed as unanswered, unless triage answered one of its tickets
     * automatically. Retune when knowledge's scores change: `npm run eval:digest -- --floor <x>`
     * (docs/answer-quality.md).
     */
    DIGEST_KB_SCORE_FLOOR: unit(0.5),
    /** KB hits per question taken as its candidate topics. */
    DIGEST_SEARCH_DEPTH: int(1, 20, 10),
    /** KB searches in flight at once while a digest is built. */
    DIGEST_SEARCH_CONCURRENCY: int(1, 64, 4),
    /** Tickets of one week grouped into topics (the total always counts every ticket). */
    DIGEST_MAX_TICKETS: int(1, 100_000, 1_000),
    /** Deadline of each call to knowledge. */
    GRPC_DEADLINE_MS: int(100, 120_000, 5_000),
    MYSQL_POOL_SIZE: int(1, 500, 10),
    /** In-flight calls and the in-flight event get this long to finish at shutdown. */
    SHUTDOWN_GRACE_MS: int(0, 120_000, 10_000),
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
