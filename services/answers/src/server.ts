import { join } from 'node:path';
import {
  createLogger,
  DAY_MS,
  gracefulStop,
  HOUR_MS,
  openAiConfigured,
  openWithClosers,
  redactUrl,
  serveGrpc,
  type ClockOptions,
  type GrpcServiceHandle,
  type Logger,
} from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import type { AnswersConfig } from './config.js';
import { LABELS_CONSUMER, openTicketEventSource, TRIAGE_CONSUMER } from '@support-agent/events';
import type { DeflectionLedger, LanguageModel, PolicyStore } from './domain/ports.js';
import { TriageMemo, type TriageDeps } from './domain/triage.js';
import { loadTriageModel } from './domain/triage-model.js';
import { EmbeddedLedger } from './data-access/embedded-ledger.js';
import { ExtractiveModel } from './data-access/extractive-llm.js';
import { KnowledgeSearchClient } from './data-access/knowledge-client.js';
import { MysqlLedger } from './data-access/mysql-ledger.js';
import { LedgerFallback } from './domain/ledger-fallback.js';
import { OpenAiModel } from './data-access/openai-llm.js';
import { TriageReporter } from './data-access/tickets-client.js';
import { createAnswersHandlers } from './entry-points/grpc/answers-handlers.js';
import { TriageConsumer } from './entry-points/events/triage-consumer.js';
import { LabelsConsumer } from './entry-points/events/labels-consumer.js';
import { createTriageHandlers } from './entry-points/grpc/triage-handlers.js';
import { TrainingRunner } from './entry-points/jobs/training-runner.js';
import { OrgModelRegistry } from './domain/org-triage/model-registry.js';
import type { OrgTriageDeps } from './domain/org-triage/org-triage.js';
import type { TriageStore } from './domain/org-triage/ports.js';
import { EmbeddedTriageStore } from './data-access/embedded-triage-store.js';
import { MysqlTriageStore } from './data-access/mysql-triage-store.js';
import { meteredLedger } from './metrics.js';

/** Settled reservations are kept this long: a redelivered triage event must still find its commit. */
const RESERVATION_RETENTION_MS = 35 * DAY_MS;
/** An upload whose client went away is forgotten after this. */
const STAGED_UPLOAD_TTL_MS = HOUR_MS;
/** Refresh of the triage_consumer_pending gauge. */
const LAG_POLL_MS = 5_000;

export type AnswersServer = GrpcServiceHandle;

/**
 * Starts the answers service: ledger, gRPC server with health, sweeper, and the triage consumer;
 * stop() drains triage before in-flight calls finish.
 */
export async function start(
  config: AnswersConfig,
  logger: Logger = createLogger('answers', config.LOG_LEVEL),
  options: ClockOptions = {},
): Promise<AnswersServer> {
  return openWithClosers(logger, async (closers) => {
    const now = options.now ?? (() => new Date());
    const ledger = meteredLedger(await openLedger(config, logger));
    closers.push(() => ledger.close());

    const knowledge = new KnowledgeSearchClient(
      config.KNOWLEDGE_ADDR.address,
      config.GRPC_DEADLINE_MS,
      config.KNOWLEDGE_SEARCH_BATCH,
    );
    closers.push(() => knowledge.close());
    const tickets = new TriageReporter(
      config.TICKETS_ADDR.address,
      config.GRPC_DEADLINE_MS,
      config.APPLY_TRIAGE_BATCH,
    );
    closers.push(() => tickets.close());

    const builtinModel = loadTriageModel();
    const builtin = new ExtractiveModel(builtinModel);

    // Each organization's own triage: its store, the active models, the training runs.
    const triageStore = await openTriageStore(config, logger);
    closers.push(() => triageStore.close());
    const orgModels = new OrgModelRegistry(triageStore, builtinModel, logger);
    await orgModels.refresh();
    orgModels.start(config.TRIAGE_MODEL_REFRESH_MS);
    closers.push(() => orgModels.stop());
    const runner = config.TRIAGE_TRAINING_WORKER
      ? new TrainingRunner({
          store: triageStore,
          logger: logger.child({ component: 'triage-training' }),
          now,
          pollMs: config.TRIAGE_TRAINING_POLL_MS,
          leaseMs: config.TRIAGE_TRAINING_LEASE_MS,
          timeoutMs: config.TRIAGE_TRAINING_TIMEOUT_MS,
          maxMemoryMb: config.TRIAGE_TRAINING_MAX_MB,
          nice: config.TRIAGE_TRAINING_NICE,
          activated: () => void orgModels.refresh().catch(() => undefined),
        })
      : undefined;
    const orgTriage: OrgTriageDeps = {
      store: triageStore,
      logger,
      now,
      jobQueued: () => runner?.poke(),
      activated: () => void orgModels.refresh().catch(() => undefined),
    };
    const uploadSweeper = setInterval(() => {
      triageStore
        .purgeUploads(new Date(now().getTime() - STAGED_UPLOAD_TTL_MS))
        .catch((err: unknown) =>
          logger.warn({ err: (err as Error).message }, 'upload sweep failed'),
        );
    }, STAGED_UPLOAD_TTL_MS / 4);
    uploadSweeper.unref();
    closers.push(() => clearInterval(uploadSweeper));
    let llm: LanguageModel | undefined;
    if (openAiConfigured(config)) {
      llm = new OpenAiModel({
        apiKey: config.OPENAI_API_KEY,
        baseURL: config.OPENAI_BASE_URL,
        model: config.ANSWERS_MODEL,
        maxRetries: config.LLM_MAX_RETRIES,
        breakerFailures: config.LLM_BREAKER_FAILURES,
        breakerOpenMs: config.LLM_BREAKER_OPEN_MS,
        logger,
      });
      logger.info(
        {
          model: config.ANSWERS_MODEL,
          baseUrl: config.OPENAI_BASE_URL ? redactUrl(config.OPENAI_BASE_URL) : 'default',
        },
        'LLM provider: openai (built-in fallback)',
      );
    } else {
      logger.info('LLM provider: built-in (extractive answers, shipped classifier)');
    }

    const deps: TriageDeps = {
      ledger,
      policies: ledger,
      knowledge,
      tickets,
      builtin,
      llm,
      logger,
      now,
      reservationTtlMs: config.RESERVATION_TTL_MS,
      llmTimeoutMs: config.LLM_TIMEOUT_MS,
      ledgerFallback: new LedgerFallback(),
      memo: new TriageMemo(),
      orgModels,
    };

    const sweeper = startSweeper(ledger, logger, now, config.RESERVATION_TTL_MS);
    closers.push(() => sweeper.stop());

    const grpc = await serveGrpc(
      'answers',
      config.ANSWERS_ADDR,
      logger,
      {
        definition: answers.AnswersServiceService,
        implementation: createAnswersHandlers(deps, logger),
      },
      {
        definition: answers.TriageServiceService,
        implementation: createTriageHandlers(orgTriage, logger),
      },
    );
    closers.push(() => grpc.stop(0));
    if (runner) {
      runner.start();
      closers.push(() => runner.stop());
    }

    const events = openTicketEventSource(
      {
        consumer: TRIAGE_CONSUMER,
        natsUrl: config.NATS_URL,
        dataDir: config.DATA_DIR,
        concurrency: config.TRIAGE_CONCURRENCY,
        batchSize: config.TRIAGE_BATCH,
        ackWaitMs: config.TRIAGE_ACK_WAIT_MS,
        replicas: config.NATS_STREAM_REPLICAS,
        // Each batch's offset is saved: a crash re-triages at most the batch in hand.
        file: {
          offsetFile: join(config.DATA_DIR, 'answers', 'triage-offset.json'),
          concurrency: config.TRIAGE_CONCURRENCY,
          batchSize: config.TRIAGE_BATCH,
          saveEvery: 1,
        },
      },
      logger,
    );
    const consumer = new TriageConsumer(events, deps, logger);
    consumer.start();
    closers.push(() => consumer.stop());
    const labels = new LabelsConsumer(
      openTicketEventSource(
        {
          consumer: LABELS_CONSUMER,
          natsUrl: config.NATS_URL,
          dataDir: config.DATA_DIR,
          concurrency: 1,
          ackWaitMs: config.TRIAGE_ACK_WAIT_MS,
          replicas: config.NATS_STREAM_REPLICAS,
          file: {
            offsetFile: join(config.DATA_DIR, 'answers', 'labels-offset.json'),
            concurrency: 1,
            saveEvery: 1,
          },
        },
        logger,
      ),
      orgTriage,
      logger,
    );
    labels.start();
    closers.push(() => labels.stop());
    const lagTimer = setInterval(() => void consumer.refreshLag(), LAG_POLL_MS);
    lagTimer.unref();
    closers.push(() => clearInterval(lagTimer));

    return {
      port: grpc.port,
      stop: gracefulStop('answers', grpc, config.SHUTDOWN_GRACE_MS, closers, () => consumer.stop()),
    };
  });
}

/** MySQL when MYSQL_URL is set, the embedded journal otherwise (config guarantees EMBEDDED then). */
async function openLedger(
  config: AnswersConfig,
  logger: Logger,
): Promise<DeflectionLedger & PolicyStore> {
  if (config.MYSQL_URL) {
    logger.info({ mysql: redactUrl(config.MYSQL_URL) }, 'deflection ledger: MySQL');
    return MysqlLedger.open(config.MYSQL_URL, logger, { poolSize: config.MYSQL_POOL_SIZE });
  }
  return EmbeddedLedger.open(join(config.DATA_DIR, 'answers'), logger);
}

/** MySQL when MYSQL_URL is set, the embedded journal otherwise. */
async function openTriageStore(config: AnswersConfig, logger: Logger): Promise<TriageStore> {
  if (config.MYSQL_URL) return MysqlTriageStore.open(config.MYSQL_URL, logger);
  return EmbeddedTriageStore.open(join(config.DATA_DIR, 'answers'), logger);
}

/**
 * Releases reservations of generations that never finished (a crash mid-generation)
 * once their TTL passed, and forgets settled ones after RESERVATION_RETENTION_MS.
 */
function startSweeper(
  ledger: DeflectionLedger,
  logger: Logger,
  now: () => Date,
  ttlMs: number,
): { stop(): Promise<void> } {
  const intervalMs = Math.max(250, Math.min(30_000, Math.floor(ttlMs / 2)));
  let lastPurge = 0;
  let running: Promise<void> | undefined;
  const sweep = async () => {
    try {
      await ledger.releaseExpired(now());
      if (Date.now() - lastPurge > HOUR_MS) {
        lastPurge = Date.now();
        const purged = await ledger.purge(new Date(now().getTime() - RESERVATION_RETENTION_MS));
        if (purged > 0) logger.info({ purged }, 'purged settled deflection reservations');
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'deflection sweep failed');
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
