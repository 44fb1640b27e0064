import { createLogger, onShutdownSignal, runMain, serveMetrics } from '@support-agent/shared';
import { loadTicketsConfig } from './config.js';
import { start } from './server.js';

runMain('tickets', async () => {
  const config = loadTicketsConfig();
  const logger = createLogger('tickets', config.LOG_LEVEL);
  const metrics = await serveMetrics(
    { port: config.METRICS_PORT, host: config.METRICS_HOST },
    logger,
  );
  const server = await start(config, logger);
  onShutdownSignal(logger, async () => {
    await server.stop();
    await metrics?.close();
  });
});
