import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import { tickets as ticketsPb } from '@support-agent/proto';
import { checkHealth, createLogger, redactUrl, sleep, type Logger } from '@support-agent/shared';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { AnswersClient } from './clients/answers.client.js';
import { DigestClient } from './clients/digest.client.js';
import { KnowledgeClient } from './clients/knowledge.client.js';
import { TicketsClient } from './clients/tickets.client.js';
import { assertRunnable, type GatewayConfig } from './config.js';
import { ensureAdminTokenFile } from './data-access/admin-token-file.js';
import { DemoKbMarker } from './data-access/demo-kb-marker.js';
import { EmbeddedGatewayStore } from './data-access/embedded-store.js';
import type { GatewayStore } from './data-access/gateway-store.js';
import { MysqlGatewayStore } from './data-access/mysql-store.js';
import { readOpenApiFile } from './data-access/openapi-file.js';
import { connectRedis, waitForRedis } from './data-access/redis.js';
import { AgentOperations } from './domain/agent-operations.js';
import { ApiContract, type JsonObject } from './domain/api-contract.js';
import { DemoKbSeeder } from './domain/demo-kb-seeder.js';
import { KeyResolver } from './domain/key-resolver.js';
import { bootstrapDemo, OrgAdmin, type DemoBootstrap } from './domain/orgs.js';
import { OrgPolicySync } from './domain/policy-sync.js';
import { createAdminApp } from './entry-points/admin/app.js';
import { createPublicApp } from './entry-points/http/app.js';
import type { ReadinessCheck } from './entry-points/http/health.js';
import {
  AuthFailureThrottle,
  limiterFactory,
  RequestRateLimiter,
} from './entry-points/http/rate-limit.js';

export interface GatewayHandle {
  /** Bound port of the public API. */
  port: number;
  /** Bound port of the admin API. */
  adminPort: number;
  /** The admin token in force (from ADMIN_TOKEN or DATA_DIR/admin-token). */
  adminToken: string;
  /** Set only when this start generated the admin token (embedded first start): print it once. */
  generatedAdminToken?: { token: string; path: string };
  /** Set only on an embedded first start: the demo organization's all-scope key, to print once. */
  demo?: DemoBootstrap;
  /** Set while (or after) an embedded start loads the demo KB in the background. */
  demoKb?: DemoKbSeeder;
  /** Fails readiness, drains in-flight requests, then closes clients, Redis and the store. */
  stop(): Promise<void>;
}

const REDIS_STARTUP_WAIT_MS = 5_000;
const MAX_HEADER_BYTES = 64 * 1024;

/** Starts the public and admin listeners; port 0 picks free ports (tests). */
export async function start(
  config: GatewayConfig,
  logger: Logger = createLogger('gateway', config.logLevel),
): Promise<GatewayHandle> {
  assertRunnable(config);
  // The OpenAPI document first: an inconsistent contract fails the start before anything opens.
  const contract = new ApiContract(readOpenApiFile() as JsonObject);
  // Closed in reverse order of opening, after the listeners.
  const resources: Array<() => Promise<void> | void> = [];
  const servers: http.Server[] = [];
  const closeResources = async () => {
    for (const close of [...resources].reverse()) {
      await Promise.resolve()
        .then(close)
        .catch((err: unknown) => logger.warn({ err }, 'error while closing'));
    }
  };

  try {
    let adminToken = config.adminToken;
    let generatedAdminToken: GatewayHandle['generatedAdminToken'];
    if (adminToken === undefined) {
      const file = ensureAdminTokenFile(config.dataDir);
      adminToken = file.token;
      if (file.generated) generatedAdminToken = { token: file.token, path: file.path };
      else logger.info({ path: file.path }, 'using the admin token stored in DATA_DIR');
    }

    const store: GatewayStore = config.mysqlUrl
      ? await MysqlGatewayStore.open(config.mysqlUrl, logger)
      : new EmbeddedGatewayStore(path.join(config.dataDir, 'gateway', 'store.jsonl'));
    resources.push(() => store.close());
    const demo = config.embedded ? await bootstrapDemo(store) : undefined;
    const demoKbMarker = config.embedded ? new DemoKbMarker(config.dataDir) : undefined;
    if (demo) demoKbMarker?.markPending();

    let redis: Redis | undefined;
    if (config.redisUrl) {
      const client = connectRedis(config.redisUrl, logger);
      redis = client;
      resources.push(() => {
        client.removeAllListeners('close'); // not an outage: don't log one
        client.disconnect();
      });
      if (!(await waitForRedis(client, REDIS_STARTUP_WAIT_MS))) {
        logger.warn(
          { redis: redactUrl(config.redisUrl) },
          'Redis not ready at start-up; serving with in-memory limits',
        );
      }
    }

    const tickets = new TicketsClient(config.ticketsAddr, config.grpcDeadlineMs);
    const knowledge = new KnowledgeClient(
      config.knowledgeAddr,
      config.grpcDeadlineMs,
      config.grpcBulkDeadlineMs,
    );
    const answers = new AnswersClient(config.answersAddr, config.grpcDeadlineMs);
    const digest = new DigestClient(
      config.digestAddr,
      config.grpcDeadlineMs,
      config.grpcBulkDeadlineMs,
    );
    resources.push(() => [tickets, knowledge, answers, digest].forEach((c) => c.close()));

    // Pending from the first start until the knowledge service has taken the demo KB.
    let demoKb: DemoKbSeeder | undefined;
    if (demoKbMarker?.isPending()) {
      const seeder = new DemoKbSeeder(knowledge, demoKbMarker, logger);
      demoKb = seeder;
      resources.push(() => seeder.stop());
      seeder.start();
    }

    const policySync = new OrgPolicySync(answers, logger);
    resources.push(() => policySync.stop());
    void policySync.publishAll(store);

    let shuttingDown = false;
    const isShuttingDown = () => shuttingDown;
    const createLimiter = limiterFactory(redis);

    const readinessChecks: ReadinessCheck[] = [
      { name: 'store', check: () => store.ping() },
      ...(redis ? [{ name: 'redis', check: async () => void (await redis.ping()) }] : []),
      {
        name: 'tickets',
        check: async () => {
          if (
            !(await checkHealth(
              config.ticketsAddr,
              ticketsPb.TicketsServiceClient.serviceName,
              1_500,
            ))
          ) {
            throw new Error(`tickets service at ${config.ticketsAddr} is not serving`);
          }
        },
      },
    ];

    const publicApp = createPublicApp({
      logger,
      publicBaseUrl: config.publicBaseUrl,
      fallbackBaseUrl: `http://localhost:${config.port}`,
      authorizationServers: config.authorizationServers ?? [],
      trustProxy: config.trustProxy,
      resolver: new KeyResolver(store, config.keyCacheTtlMs),
      authThrottle: new AuthFailureThrottle(createLimiter, config.authFailuresPerMinPerIp, logger),
      rateLimiter: new RequestRateLimiter(createLimiter, logger, redis),
      contract,
      operations: new AgentOperations({
        rules: contract.rules,
        knowledge,
        digest,
        tickets,
        answers,
      }),
      mcpAllowedOrigins: config.mcpAllowedOrigins,
      readinessChecks,
      shuttingDown: isShuttingDown,
    });
    const adminApp = createAdminApp({
      logger,
      adminToken,
      orgs: new OrgAdmin(store, (orgId, settings) => policySync.publish(orgId, settings)),
      tickets,
      knowledge,
      digest,
      answers,
      ticketStatuses: contract.enumValues('TicketStatus'),
      shuttingDown: isShuttingDown,
    });

    const timeouts = {
      headersMs: config.httpHeadersTimeoutMs ?? 20_000,
      requestMs: config.httpRequestTimeoutMs ?? 30_000,
    };
    const publicServer = await listen(publicApp, config.port, config.host, timeouts);
    servers.push(publicServer);
    const adminServer = await listen(adminApp, config.adminPort, config.adminHost, timeouts);
    servers.push(adminServer);
    const port = (publicServer.address() as AddressInfo).port;
    const adminPort = (adminServer.address() as AddressInfo).port;
    logger.info(
      {
        port,
        adminPort,
        store: config.mysqlUrl ? 'mysql' : 'embedded',
        rateLimits: redis ? 'redis' : 'memory',
      },
      'gateway listening',
    );

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        shuttingDown = true;
        logger.info('gateway stopping: readiness failed, draining requests');
        if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
        await Promise.all(servers.map((s) => closeServer(s, config.shutdownGraceMs)));
        await closeResources();
        logger.info('gateway stopped');
      })();
      return stopping;
    };

    return {
      port,
      adminPort,
      adminToken,
      ...(generatedAdminToken ? { generatedAdminToken } : {}),
      ...(demo ? { demo } : {}),
      ...(demoKb ? { demoKb } : {}),
      stop,
    };
  } catch (err) {
    await Promise.all(servers.map((s) => closeServer(s, 0)));
    await closeResources();
    throw err;
  }
}

async function listen(
  app: Express,
  port: number,
  host: string,
  timeouts: { headersMs: number; requestMs: number },
): Promise<http.Server> {
  // 64 KiB of headers: a 2000-code-point query in the URL can take 24 KB percent-encoded.
  const server = http.createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      // Node checks the two timeouts below only every connectionsCheckingInterval (30 s by
      // default), which let a slow client hold a socket up to twice as long as configured.
      connectionsCheckingInterval: 1_000,
      // Node answers a missing Host with a bare 400; requestContext answers it in JSON.
      requireHostHeader: false,
    },
    app,
  );
  server.on('clientError', answerClientError);
  // CONNECT is no route of ours; without a listener Node would drop the socket unanswered.
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) =>
    answerRaw(socket, 405, 'Method Not Allowed', 'method_not_allowed', 'CONNECT is not supported'),
  );
  // Slow clients cannot hold a socket forever: headers and the whole request within these
  // (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS), else 408; keep-alive outlives typical
  // LB idle timeouts.
  server.requestTimeout = timeouts.requestMs;
  server.headersTimeout = Math.min(timeouts.headersMs, timeouts.requestMs);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Requests Node rejects before express sees them (unparseable, headers too large) still get
 * the JSON error body rather than an empty response.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          'request headers (including the URL) exceed 64 KiB',
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request not received in time']
        : [400, 'Bad Request', 'malformed HTTP request'];
  answerRaw(socket, status, reason, 'invalid_request', message);
}

/** Writes a complete JSON error response straight to the socket and closes it. */
function answerRaw(
  socket: Duplex,
  status: number,
  reason: string,
  code: string,
  message: string,
): void {
  const body = JSON.stringify({ error: { message, code } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Stops accepting connections and waits for in-flight requests; idle keep-alive sockets are
 * closed as they become idle, and whatever is still open after graceMs is cut.
 */
function closeServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idleSweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
