import { onShutdownSignal, runMain } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { serveMetrics } from './metrics.js';
import { privateUmask, securePrivateDir } from './private-dir.js';

/** The settings runService reads itself; every schema has them (commonEnv, metricsEnv). */
export interface ServiceSettings {
  EMBEDDED: boolean;
  DATA_DIR: string;
  LOG_LEVEL: string;
  METRICS_PORT: number;
  METRICS_HOST: string;
}

/** What a service's main.ts tells runService. */
export interface ServiceMain<C extends ServiceSettings, S extends { stop(): Promise<void> }> {
  /** Reads and validates the environment (the service's loadConfig). */
  loadConfig: () => C;
  /** False for a service that serves its metrics endpoint from start() itself (digest). */
  serveMetrics?: boolean;
  /** Runs first, before anything else is loaded or started (V8 flags). */
  prepare?: (config: C) => void;
  start: (config: C, logger: Logger) => Promise<S>;
  /** After a successful start (first-start notes on stdout). */
  started?: (server: S, config: C) => void;
}

/**
 * The whole of a service's main: config, logger (LOG_LEVEL), in embedded mode a private
 * DATA_DIR (privateDataDir), metrics endpoint (METRICS_PORT,
 * METRICS_HOST), start, and a graceful stop on SIGTERM/SIGINT (the server first, then the
 * metrics endpoint). A failed start prints one line and exits 1.
 */
export function runService<C extends ServiceSettings, S extends { stop(): Promise<void> }>(
  name: string,
  main: ServiceMain<C, S>,
): void {
  runMain(name, async () => {
    const config = main.loadConfig();
    main.prepare?.(config);
    const logger = createLogger(name, config.LOG_LEVEL);
    if (config.EMBEDDED) privateDataDir(config.DATA_DIR, logger);
    const metrics =
      main.serveMetrics === false
        ? undefined
        : await serveMetrics({ port: config.METRICS_PORT, host: config.METRICS_HOST }, logger);
    const server = await main.start(config, logger);
    main.started?.(server, config);
    onShutdownSignal(logger, async () => {
      await server.stop();
      await metrics?.close();
    });
  });
}

/**
 * Embedded mode keeps every tenant's data and the signing secrets under DATA_DIR: owner-only
 * from the umask on, the folder 0700 and what it already holds tightened (securePrivateDir).
 * A DATA_DIR that cannot be changed (read-only, another owner) is logged, not fatal: a service
 * whose backends are all set never writes there.
 */
function privateDataDir(dataDir: string, logger: Logger): void {
  privateUmask();
  try {
    securePrivateDir(dataDir);
  } catch (err) {
    logger.warn({ err, dataDir }, 'DATA_DIR could not be made private (0700, files 0600)');
  }
}
