import type http from 'node:http';
import {
  assertRunnable,
  Closers,
  createLogger,
  once,
  sleep,
  type Logger,
} from '@support-agent/shared';
import { openAdapters, createApps, resolveAdminToken } from './composition.js';
import { REQUIRED_BACKENDS, type GatewayConfig } from './config.js';
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
  logger: Logger = createLogger('gateway', config.LOG_LEVEL),
): Promise<GatewayHandle> {
  assertRunnable(config, REQUIRED_BACKENDS);
  // The OpenAPI document first: an inconsistent contract fails the start before anything opens.
  const contract = new ApiContract(readOpenApiFile() as JsonObject);
  const closers = new Closers(logger);
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
      headersMs: config.HTTP_HEADERS_TIMEOUT_MS,
      requestMs: config.HTTP_REQUEST_TIMEOUT_MS,
    };
    servers.push(await listen(apps.publicApp, config.PORT, config.HOST, timeouts));
    servers.push(await listen(apps.adminApp, config.ADMIN_PORT, config.ADMIN_HOST, timeouts));
    const [port, adminPort] = servers.map(boundPort) as [number, number];
    logger.info(
      {
        port,
        adminPort,
        store: config.MYSQL_URL ? 'mysql' : 'embedded',
        rateLimits: adapters.redis ? 'redis' : 'memory',
      },
      'gateway listening',
    );

    const stop = once(async () => {
      shuttingDown = true;
      logger.info('gateway stopping: readiness failed, draining requests');
      if (config.SHUTDOWN_DELAY_MS > 0) await sleep(config.SHUTDOWN_DELAY_MS);
      await Promise.all(servers.map((s) => closeServer(s, config.SHUTDOWN_GRACE_MS)));
      await closers.closeAll();
      logger.info('gateway stopped');
    });

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
    await closers.closeAll();
    throw err;
  }
}
