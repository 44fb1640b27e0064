import type http from 'node:http';
import { createLogger, sleep, type Logger } from '@support-agent/shared';
import { openAdapters, createApps, resolveAdminToken, type Closers } from './composition.js';
import { assertRunnable, type GatewayConfig } from './config.js';
import { readOpenApiFile } from './data-access/openapi-file.js';
import { ApiContract, type JsonObject } from './domain/api-contract.js';
import type { DemoKbSeeder } from './domain/demo-kb-seeder.js';
import type { DemoBootstrap } from './domain/orgs.js';
import { boundPort, closeServer, listen } from './entry-points/http/http-server.js';

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

/** Starts the public and admin listeners; port 0 picks free ports (tests). */
export async function start(
  config: GatewayConfig,
  logger: Logger = createLogger('gateway', config.logLevel),
): Promise<GatewayHandle> {
  assertRunnable(config);
  // The OpenAPI document first: an inconsistent contract fails the start before anything opens.
  const contract = new ApiContract(readOpenApiFile() as JsonObject);
  const closers: Closers = [];
  const servers: http.Server[] = [];
  try {
    const adminToken = resolveAdminToken(config, logger);
    const adapters = await openAdapters(config, logger, closers);
    let shuttingDown = false;
    const apps = createApps({
      config,
      logger,
      contract,
      adapters,
      adminToken: adminToken.token,
      shuttingDown: () => shuttingDown,
    });

    const timeouts = {
      headersMs: config.httpHeadersTimeoutMs ?? 20_000,
      requestMs: config.httpRequestTimeoutMs ?? 30_000,
    };
    servers.push(await listen(apps.publicApp, config.port, config.host, timeouts));
    servers.push(await listen(apps.adminApp, config.adminPort, config.adminHost, timeouts));
    const [port, adminPort] = servers.map(boundPort) as [number, number];
    logger.info(
      {
        port,
        adminPort,
        store: config.mysqlUrl ? 'mysql' : 'embedded',
        rateLimits: adapters.redis ? 'redis' : 'memory',
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
        await closeAll(closers, logger);
        logger.info('gateway stopped');
      })();
      return stopping;
    };

    return {
      port,
      adminPort,
      adminToken: adminToken.token,
      ...(adminToken.generated ? { generatedAdminToken: adminToken.generated } : {}),
      ...(adapters.demo ? { demo: adapters.demo } : {}),
      ...(adapters.demoKb ? { demoKb: adapters.demoKb } : {}),
      stop,
    };
  } catch (err) {
    await Promise.all(servers.map((s) => closeServer(s, 0)));
    await closeAll(closers, logger);
    throw err;
  }
}

/** Closes newest first; a failing close is logged and the others still run. */
async function closeAll(closers: Closers, logger: Logger): Promise<void> {
  for (const close of [...closers].reverse()) {
    await Promise.resolve()
      .then(close)
      .catch((err: unknown) => logger.warn({ err }, 'error while closing'));
  }
}
