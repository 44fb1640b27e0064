import {
  backendUrl,
  boolFlag,
  DAY_MS,
  HOUR_MS,
  intEnv,
  openAiEnv,
  port,
  serviceAddr,
  serviceTarget,
  serviceConfig,
  sharedSetting,
  unitEnv,
  z,
} from '@support-agent/shared';
import { DIGEST_CONSUMER } from '@support-agent/events';
import type { DigestSettings } from './domain/build-digest.js';
import { scheduleOffsetMinutes, WEEK_MINUTES, WEEKDAYS } from './domain/schedule.js';

/** Topic similarity: embedding cosine (≤ 1) + 2 × a probability (≤ 1). */
const SIMILARITY_MAX = 3;
const similarityEnv = (fallback: number) =>
  z.coerce.number().min(0).max(SIMILARITY_MAX).default(fallback);

/** Environment of the digest service (docs/configuration.md). */
const digestConfig = serviceConfig(
  'digest',
  {
    DIGEST_ADDR: serviceAddr(
      'digest',
      'host:port of the gRPC listener; port 0 picks a free one (tests).',
    ),
    KNOWLEDGE_ADDR: serviceTarget(
      'knowledge',
      'The knowledge service: Search (topic answers) and EmbeddingsService.Embed (topic grouping); host:port, a name of every replica, or ip:port,ip:port.',
    ),
    MYSQL_URL: backendUrl.mysql('aggregates, digests, schedule lease and runs.'),
    NATS_URL: backendUrl.nats(
      'ticket events, durable consumer DIGEST_CONSUMER_NAME (packages/events).',
    ),
    ...openAiEnv('the `openai` client writes the topic answers; unset = extractive.'),
    DIGEST_MODEL: sharedSetting.model('gpt-4o-mini', 'Chat model of the topic answers.'),
    DIGEST_LLM_TIMEOUT_MS: sharedSetting.llmTimeout(
      'Time budget of the LLM summary of one digest; then the extractive answers stay.',
    ),

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
    DIGEST_SCHEDULER_TICK_MS: intEnv(10, HOUR_MS, 30_000).describe(
      'How often each replica checks whether the due weekly run happened.',
    ),
    DIGEST_LEASE_TTL_MS: intEnv(100, HOUR_MS, 60_000).describe(
      'The scheduler lease lasts this long unless renewed (renewed every third of it during a run).',
    ),
    DIGEST_RUN_STALE_MS: intEnv(100, DAY_MS, 600_000).describe(
      'An unfinished run whose heartbeat is older than this (its replica died) is run again.',
    ),
    DIGEST_SCHEDULE_MAX_LAG_WAIT_MS: intEnv(0, DAY_MS, 900_000).describe(
      'After the due time, the run waits for the event consumer to catch up at most this long.',
    ),

    DIGEST_METRICS_PORT: port
      .optional()
      .describe('The former name of METRICS_PORT, still honoured when METRICS_PORT is unset.'),
    DIGEST_CONSUMER_NAME: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, - and _ only')
      .default(DIGEST_CONSUMER.name)
      .describe('Durable consumer name on the ticket events stream.'),
    DIGEST_CONSUMER_CONCURRENCY: intEnv(1, 32, 4).describe(
      'Batches of events applied at the same time (each one transaction).',
    ),
    DIGEST_CONSUMER_BATCH: intEnv(1, 1_000, 100).describe(
      'Most events applied in one transaction: those waiting, up to this (docs/performance.md).',
    ),
    DIGEST_CONSUMER_LINGER_MS: intEnv(0, 5_000, 50).describe(
      'How long a batch that is not full waits for more events before it is applied.',
    ),
    DIGEST_ACK_WAIT_MS: sharedSetting.eventAckWait(),
    DIGEST_PULL_EXPIRES_MS: intEnv(1_000, 60_000, 2_000).describe(
      'How long one pull waits for an event (and the longest stop() waits for an idle pull).',
    ),
    DIGEST_LAG_POLL_MS: intEnv(100, 600_000, 5_000).describe(
      'How often consumer lag (digest_consumer_pending) is refreshed.',
    ),
    NATS_STREAM_REPLICAS: sharedSetting.streamReplicas(),

    DIGEST_EMBEDDINGS: z
      .enum(['auto', 'lexical'])
      .default('auto')
      .describe(
        "`auto`: knowledge's EmbeddingsService, falling back to the built-in lexical embeddings; `lexical`: built-in only.",
      ),
    DIGEST_TOPIC_THRESHOLD: z.coerce
      .number()
      .min(0)
      .max(SIMILARITY_MAX)
      .optional()
      .describe(
        "Average-linkage similarity at which questions and topics merge: embedding cosine + 2 × the probability that one KB topic answers both (the sum of the products of their calibrated search scores; the cosine alone without hits), 0–3. Unset = a default per vector space (docs/answer-quality.md): 0.6 with knowledge's hashed embeddings (chosen on the StackFAQ dev weeks), 0.3 for the built-in lexical ones (used only when knowledge is down, so the cosine alone).",
      ),
    DIGEST_TOPIC_THRESHOLD_LEXICAL: unitEnv(0.3).describe(
      'The merge threshold with the built-in lexical embeddings (DIGEST_TOPIC_THRESHOLD unset).',
    ),
    DIGEST_TOPIC_THRESHOLD_HASHED: similarityEnv(0.6).describe(
      "The merge threshold with knowledge's hashed embeddings (DIGEST_TOPIC_THRESHOLD unset).",
    ),
    DIGEST_TOPIC_THRESHOLD_DENSE: similarityEnv(0.75).describe(
      'Not measured here (no learned model runs in this environment): dense cosines run higher.',
    ),
    DIGEST_TOP_TOPICS: intEnv(1, 100, 10).describe('Topics shown with their answers.'),
    DIGEST_CHECKED_TOPICS: intEnv(1, 200, 25).describe(
      'Unanswered topics listed in the Markdown, biggest first (the rest are counted).',
    ),
    DIGEST_KB_SCORE_FLOOR: unitEnv(0.5).describe(
      "Share of a topic's tickets its best KB entry must be expected to answer (its mean calibrated search score over them) for the topic to be shown with that answer; below it the topic is listed as unanswered, unless triage answered one of its tickets automatically. Retune when knowledge's scores change: `npm run eval:digest -- --floor <x>` (docs/answer-quality.md).",
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
    GRPC_DEADLINE_MS: sharedSetting.grpcDeadline('knowledge'),
    MYSQL_POOL_SIZE: sharedSetting.mysqlPoolSize(10),
    SHUTDOWN_GRACE_MS: sharedSetting.shutdownGrace('In-flight calls and the in-flight event'),
  },
  ['MYSQL_URL', 'NATS_URL'],
);

export const configSchema = digestConfig.schema;
export type DigestConfig = z.infer<typeof configSchema>;

/**
 * Reads and validates the environment once at start-up. DIGEST_METRICS_PORT, the former name of
 * METRICS_PORT, stands in for it only when METRICS_PORT is unset: the current name always wins
 * (METRICS_PORT=0 turns metrics off whatever an old deployment still sets), and an explicit
 * former name still wins over PORT_BASE's layout, like any explicit port.
 */
export function loadDigestConfig(env: NodeJS.ProcessEnv = process.env): DigestConfig {
  const legacy = env.DIGEST_METRICS_PORT;
  const unset = (env.METRICS_PORT ?? '') === '';
  return digestConfig.load(unset && legacy ? { ...env, METRICS_PORT: legacy } : env);
}

/** The metrics port in force (0 = off): METRICS_PORT, or DIGEST_METRICS_PORT when it is unset. */
export function metricsPort(config: DigestConfig): number {
  return config.METRICS_PORT;
}

/** Minutes after a week's end at which its automatic run is due. */
export function scheduleOffset(config: DigestConfig): number {
  return (
    config.DIGEST_SCHEDULE_OFFSET_MINUTES ??
    scheduleOffsetMinutes(config.DIGEST_SCHEDULE_DAY, config.DIGEST_SCHEDULE_TIME)
  );
}

/** The digest's settings from its environment (what the service and eval:digest-folds run with). */
export function digestSettings(config: DigestConfig): DigestSettings {
  return {
    topTopics: config.DIGEST_TOP_TOPICS,
    unansweredListed: config.DIGEST_CHECKED_TOPICS,
    kbScoreFloor: config.DIGEST_KB_SCORE_FLOOR,
    searchDepth: config.DIGEST_SEARCH_DEPTH,
    maxTickets: config.DIGEST_MAX_TICKETS,
    thresholds: {
      override: config.DIGEST_TOPIC_THRESHOLD,
      lexical: config.DIGEST_TOPIC_THRESHOLD_LEXICAL,
      hashed: config.DIGEST_TOPIC_THRESHOLD_HASHED,
      dense: config.DIGEST_TOPIC_THRESHOLD_DENSE,
    },
    llmTimeoutMs: config.DIGEST_LLM_TIMEOUT_MS,
    searchConcurrency: config.DIGEST_SEARCH_CONCURRENCY,
  };
}
