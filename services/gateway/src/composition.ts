import path from 'node:path';
import { tickets as ticketsPb } from '@support-agent/proto';
import {
  checkHealth,
  type Closers,
  createAnswersClient,
  createTriageClient,
  createDigestClient,
  redactUrl,
  type Logger,
} from '@support-agent/shared';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { GatewayConfig } from './config.js';
import { ensureAdminTokenFile } from './data-access/admin-token-file.js';
import { DemoKbMarker } from './data-access/demo-kb-marker.js';
import { EmbeddedGatewayStore } from './data-access/embedded-store.js';
import { openKnowledgeUpstream } from './data-access/grpc/knowledge-upstream.js';
import { openTicketsUpstream } from './data-access/grpc/tickets-upstream.js';
import { MysqlGatewayStore } from './data-access/mysql-store.js';
import { FixedWindowAuthThrottle } from './data-access/rate-limit/auth-throttle.js';
import { limiterFactory } from './data-access/rate-limit/limiter-factory.js';
import { SlidingWindowRequestLimiter } from './data-access/rate-limit/request-limiter.js';
import { connectRedis, waitForRedis } from './data-access/redis.js';
import { AgentOperations } from './domain/agent-operations.js';
import type { ApiContract } from './domain/api-contract.js';
import { DemoKbSeeder } from './domain/demo-kb-seeder.js';
import { KeyResolver } from './domain/key-resolver.js';
import { bootstrapDemo, OrgAdmin, type DemoBootstrap } from './domain/orgs.js';
import { OrgPolicySync } from './domain/policy-sync.js';
import type { GatewayStore, Upstreams } from './domain/ports.js';
import { createAdminApp } from './entry-points/admin/app.js';
import { createPublicApp } from './entry-points/http/app.js';
import { LogRedactor } from './entry-points/http/log-redaction.js';
import { Readiness, type ReadinessCheck } from './entry-points/http/health.js';

/** What start() opened, each with its close; closed newest first, after the listeners. */

const REDIS_STARTUP_WAIT_MS = 5_000;
const READINESS_CHECK_TIMEOUT_MS = 1_500;

export interface AdminToken {
  token: string;
  /** Set only when this start generated the token (embedded first start): print it once. */
  generated?: { token: string; path: string };
}

/** ADMIN_TOKEN, or (embedded mode) the token kept in DATA_DIR, written there on first start. */
export function resolveAdminToken(config: GatewayConfig, logger: Logger): AdminToken {
  if (config.ADMIN_TOKEN !== undefined) return { token: config.ADMIN_TOKEN };
  const file = ensureAdminTokenFile(config.DATA_DIR);
  if (file.generated)
    return { token: file.token, generated: { token: file.token, path: file.path } };
  logger.info({ path: file.path }, 'using the admin token stored in DATA_DIR');
  return { token: file.token };
}

/** The adapters chosen by the configuration, and the background work started with them. */
export interface Adapters {
  store: GatewayStore;
  /** Unset = in-memory rate limits (embedded mode). */
  redis: Redis | undefined;
  upstreams: Upstreams;
  policySync: OrgPolicySync;
  /** Set only on an embedded first start: the demo organization's all-scope key. */
  demo?: DemoBootstrap;
  /** Set while (or after) an embedded start loads the demo KB in the background. */
  demoKb?: DemoKbSeeder;
}

/** Opens the store, Redis and the upstream channels; each close is pushed to `closers`. */
export async function openAdapters(
  config: GatewayConfig,
  logger: Logger,
  closers: Closers,
): Promise<Adapters> {
  const store: GatewayStore = config.MYSQL_URL
    ? await MysqlGatewayStore.open(config.MYSQL_URL, logger)
    : new EmbeddedGatewayStore(path.join(config.DATA_DIR, 'gateway', 'store.jsonl'));
  closers.push(() => store.close());
  const demo = config.EMBEDDED ? await bootstrapDemo(store) : undefined;
  const demoKbMarker = config.EMBEDDED ? new DemoKbMarker(config.DATA_DIR) : undefined;
  if (demo) demoKbMarker?.markPending();

  const redis = config.REDIS_URL
    ? await openRedis(config.REDIS_URL, config.REDIS_COMMAND_TIMEOUT_MS, logger, closers)
    : undefined;
  const upstreams = openUpstreams(config, closers);

  // Pending from the first start until the knowledge service has taken the demo KB.
  let demoKb: DemoKbSeeder | undefined;
  if (demoKbMarker?.isPending()) {
    const seeder = new DemoKbSeeder(upstreams.knowledge, demoKbMarker, logger);
    demoKb = seeder;
    closers.push(() => seeder.stop());
    seeder.start();
  }

  const policySync = new OrgPolicySync(upstreams.answers, logger);
  closers.push(() => policySync.stop());
  void policySync.publishAll(store);

  return {
    store,
    redis,
    upstreams,
    policySync,
    ...(demo ? { demo } : {}),
    ...(demoKb ? { demoKb } : {}),
  };
}

/** Redis for the rate limits; an unreachable Redis does not fail the start (in-memory limits). */
async function openRedis(
  url: string,
  commandTimeoutMs: number,
  logger: Logger,
  closers: Closers,
): Promise<Redis> {
  const client = connectRedis(url, logger, commandTimeoutMs);
  closers.push(() => {
    client.removeAllListeners('close'); // not an outage: don't log one
    client.disconnect();
  });
  if (!(await waitForRedis(client, REDIS_STARTUP_WAIT_MS))) {
    logger.warn(
      { redis: redactUrl(url) },
      'Redis not ready at start-up; serving with in-memory limits',
    );
  }
  return client;
}

/**
 * One gRPC client per upstream service (the shared clients are the domain's ports as they are),
 * each with its deadline; KB imports and digest builds get the bulk one.
 */
function openUpstreams(config: GatewayConfig, closers: Closers): Upstreams {
  const deadlineMs = config.GRPC_DEADLINE_MS;
  const bulk = config.GRPC_BULK_DEADLINE_MS;
  const tickets = openTicketsUpstream(
    config.TICKETS_ADDR.address,
    { deadlineMs },
    config.CREATE_TICKET_BATCH,
  );
  const knowledge = openKnowledgeUpstream(
    config.KNOWLEDGE_ADDR.address,
    {
      deadlineMs,
      deadlines: { upsertEntries: bulk },
    },
    config.KNOWLEDGE_SEARCH_BATCH,
  );
  const answers = createAnswersClient(config.ANSWERS_ADDR.address, { deadlineMs });
  const digest = createDigestClient(config.DIGEST_ADDR.address, {
    deadlineMs,
    deadlines: { buildDigest: bulk },
  });
  // Uploads of labelled tickets are staged in batches of up to 1,000 rows: the bulk deadline.
  const triage = createTriageClient(config.ANSWERS_ADDR.address, {
    deadlineMs,
    deadlines: { stageTriageExamples: bulk, commitTriageUpload: bulk },
  });
  closers.push(() => [tickets, knowledge, answers, digest, triage].forEach((c) => c.close()));
  return { tickets, knowledge, answers, digest, triage };
}

/** The store, Redis (when configured) and the tickets service must answer for /readyz. */
function readinessChecks(
  config: GatewayConfig,
  store: GatewayStore,
  redis: Redis | undefined,
): ReadinessCheck[] {
  return [
    { name: 'store', check: () => store.ping() },
    ...(redis ? [{ name: 'redis', check: async () => void (await redis.ping()) }] : []),
    {
      name: 'tickets',
      check: async () => {
        if (
          !(await checkHealth(
            config.TICKETS_ADDR.address,
            ticketsPb.TicketsServiceClient.serviceName,
            READINESS_CHECK_TIMEOUT_MS,
          ))
        ) {
          throw new Error(`tickets service at ${config.TICKETS_ADDR.address} is not serving`);
        }
      },
    },
  ];
}

export interface AppsInput {
  config: GatewayConfig;
  logger: Logger;
  contract: ApiContract;
  adapters: Adapters;
  adminToken: string;
  shuttingDown: () => boolean;
}

/** The public and the admin express apps over the adapters: the domain objects built here. */
export function createApps(input: AppsInput): { publicApp: Express; adminApp: Express } {
  const { config, logger, contract, adapters, shuttingDown } = input;
  const { store, redis, upstreams, policySync } = adapters;
  const createLimiter = limiterFactory(redis);
  const redactor = new LogRedactor([input.adminToken]);
  const readiness = new Readiness(readinessChecks(config, store, redis), shuttingDown);
  const publicApp = createPublicApp({
    logger,
    redactor,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    fallbackBaseUrl: `http://localhost:${config.PORT}`,
    authorizationServers: config.AUTHORIZATION_SERVERS,
    trustProxy: config.TRUST_PROXY,
    resolver: new KeyResolver(store, config.KEY_CACHE_TTL_MS),
    authThrottle: new FixedWindowAuthThrottle(
      createLimiter,
      config.AUTH_FAILURES_PER_MIN_PER_IP,
      logger,
    ),
    rateLimiter: new SlidingWindowRequestLimiter(logger, redis),
    contract,
    operations: new AgentOperations({ rules: contract.rules, ...upstreams }),
    mcpAllowedOrigins: config.MCP_ALLOWED_ORIGINS,
    readiness,
    shuttingDown,
  });
  const adminApp = createAdminApp({
    logger,
    redactor,
    adminToken: input.adminToken,
    authThrottle: new FixedWindowAuthThrottle(
      createLimiter,
      config.AUTH_FAILURES_PER_MIN_PER_IP,
      logger,
      'adminauthfail',
    ),
    orgs: new OrgAdmin(store, (orgId, settings) => policySync.publish(orgId, settings)),
    ...upstreams,
    ticketStatuses: contract.enumValues('TicketStatus'),
    readiness,
    shuttingDown,
  });
  return { publicApp, adminApp };
}
