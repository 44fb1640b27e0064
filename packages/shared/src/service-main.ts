import { onShutdownSignal, runMain } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { serveMetrics } from './metrics.js';

/** What a service's main.ts tells runService. */
export interface ServiceMain<C, S extends { stop(): Promise<void> }> {
  /** Reads and validates the environment (the service's loadConfig). */
  loadConfig: () => C;
  logLevel: (config: C) => string;
  /** The metrics endpoint (METRICS_PORT, METRICS_HOST); omitted by a service that serves its own. */
  metrics?: (config: C) => { port: number; host: string };
  /** Runs first, before anything else is loaded or started (V8 flags). */
  prepare?: (config: C) => void;
  start: (config: C, logger: Logger) => Promise<S>;
  /** After a successful start (first-start notes on stdout). */
  started?: (server: S, config: C) => void;
}

/**
 * The whole of a service's main: config, logger, metrics endpoint, start, and a graceful stop
 * on SIGTERM/SIGINT (the server first, then the metrics endpoint). A failed start prints one
 * line and exits 1.
 */
export function runService<C, S extends { stop(): Promise<void> }>(
  name: string,
  main: ServiceMain<C, S>,
): void {
  runMain(name, async () => {
    const config = main.loadConfig();
    main.prepare?.(config);
    const logger = createLogger(name, main.logLevel(config));
    const metrics = main.metrics ? await serveMetrics(main.metrics(config), logger) : undefined;
    const server = await main.start(config, logger);
    main.started?.(server, config);
    onShutdownSignal(logger, async () => {
      await server.stop();
      await metrics?.close();
    });
  });
}
