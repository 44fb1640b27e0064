import {
  backendUrl,
  boolFlag,
  DAY_MS,
  HOUR_MS,
  intEnv,
  openAiEnv,
  serviceAddr,
  serviceTarget,
  serviceConfig,
  sharedSetting,
  v8FlagsEnv,
  type z,
} from '@support-agent/shared';

/**
 * V8 heap flags applied at start-up unless V8_FLAGS says otherwise. With V8's default growing
 * factor the heap of a busy triage grew to 205–255 MB of RSS on ≈ 25 MB of live data (the
 * classifier's tables); at 50 % it stayed at 150–155 MB with no measurable CPU cost
 * (docs/performance.md, "The ticket pipeline").
 */
export const DEFAULT_V8_FLAGS = '--heap-growing-percent=50';

/** KNOWLEDGE_SEARCH_BATCH and APPLY_TRIAGE_BATCH: the most items in one batch RPC. */
const rpcBatch = (description: string) => intEnv(1, 64, 32).describe(description);

/** Environment of the answers service (docs/configuration.md). */
export const { schema: configSchema, load: loadAnswersConfig } = serviceConfig(
  'answers',
  {
    ANSWERS_ADDR: serviceAddr(
      'answers',
      'host:port of the gRPC listener (port 0 picks a free one).',
    ),
    KNOWLEDGE_ADDR: serviceTarget(
      'knowledge',
      'The knowledge service, searched for every answer (host:port, a name of every replica, or ip:port,ip:port).',
    ),
    TICKETS_ADDR: serviceTarget(
      'tickets',
      'The tickets service, told the triage result (ApplyTriage); replicas as for KNOWLEDGE_ADDR.',
    ),
    MYSQL_URL: backendUrl.mysql('deflection ledger and org policies.'),
    NATS_URL: backendUrl.nats('ticket events, durable consumer answers-triage.'),
    ...openAiEnv('the `openai` client answers and labels; unset = built-in providers.'),
    ANSWERS_MODEL: sharedSetting.model('gpt-4o-mini', 'Chat model of the answers and labels.'),
    LLM_TIMEOUT_MS: sharedSetting.llmTimeout(
      'Time budget of one LLM step (answer or labels), retries included; then the built-in provider answers.',
    ),
    LLM_MAX_RETRIES: sharedSetting.openAiRetries(2, 'one LLM call'),
    LLM_BREAKER_FAILURES: intEnv(1, 1_000, 5).describe(
      'Consecutive LLM failures that open the circuit breaker …',
    ),
    LLM_BREAKER_OPEN_MS: intEnv(100, HOUR_MS, 30_000).describe(
      '… for this long (the built-in providers answer meanwhile).',
    ),
    RESERVATION_TTL_MS: intEnv(1_000, DAY_MS, 120_000).describe(
      'A deflection slot reserved by a generation that never finished (crash) is released after this.',
    ),
    GRPC_DEADLINE_MS: sharedSetting.grpcDeadline('knowledge and tickets'),
    TRIAGE_CONCURRENCY: intEnv(1, 64, 2).describe(
      'Batches of ticket events triaged at the same time.',
    ),
    TRIAGE_BATCH: intEnv(1, 256, 16).describe(
      'Most ticket events in one batch (those waiting, up to this), triaged together: their calls to knowledge and tickets and their acknowledgements leave at once (docs/performance.md).',
    ),
    KNOWLEDGE_SEARCH_BATCH: rpcBatch(
      'Most KB searches in one knowledge.SearchBatch call: searches asked together (a triage batch) leave in one call; 1 sends each as its own Search (docs/performance.md).',
    ),
    APPLY_TRIAGE_BATCH: rpcBatch(
      'Most triage results in one tickets.ApplyTriageBatch call: results reported together (a triage batch) leave in one call; 1 sends each as its own ApplyTriage (docs/performance.md).',
    ),
    TRIAGE_ACK_WAIT_MS: sharedSetting.eventAckWait(' (progress is signalled while an LLM works)'),
    TRIAGE_MODEL_REFRESH_MS: intEnv(100, 60_000, 10_000).describe(
      "How often each replica loads the organizations' newly activated triage models: an activation reaches every replica within this (docs/triage.md).",
    ),
    TRIAGE_TRAINING_WORKER: boolFlag
      .default(true)
      .describe(
        "Whether this replica runs organizations' training jobs (in a child process at low priority); at least one replica must.",
      ),
    TRIAGE_TRAINING_POLL_MS: intEnv(100, 600_000, 2_000).describe(
      'How often a training worker looks for queued training runs (one queued on the same replica starts at once).',
    ),
    TRIAGE_TRAINING_LEASE_MS: intEnv(5_000, HOUR_MS, 60_000).describe(
      'A training run whose replica stopped reporting progress for this long is taken up by another (at most 3 tries).',
    ),
    TRIAGE_TRAINING_TIMEOUT_MS: intEnv(10_000, 6 * HOUR_MS, HOUR_MS).describe(
      'A training run still going after this is stopped and recorded as failed.',
    ),
    TRIAGE_TRAINING_MAX_MB: intEnv(128, 16_384, 1_024).describe(
      'Heap limit of the training process, MB (a run that needs more fails; the service goes on).',
    ),
    TRIAGE_TRAINING_NICE: intEnv(0, 19, 19).describe(
      'CPU priority (nice) of the training process: 19 takes only CPU time requests leave idle.',
    ),
    NATS_STREAM_REPLICAS: sharedSetting.streamReplicas(),
    MYSQL_POOL_SIZE: sharedSetting.mysqlPoolSize(20),
    SHUTDOWN_GRACE_MS: sharedSetting.shutdownGrace('In-flight calls and triage'),
    V8_FLAGS: v8FlagsEnv(DEFAULT_V8_FLAGS, 'keeps RSS under load near the live data'),
  },
  ['MYSQL_URL', 'NATS_URL'],
);

export type AnswersConfig = z.infer<typeof configSchema>;
