import { createLogger, onShutdownSignal, runMain, serveMetrics } from '@support-agent/shared';
import { loadAnswersConfig } from './config.js';
import { start } from './server.js';

runMain('answers', async () => {
  const config = loadAnswersConfig();
  const logger = createLogger('answers', config.LOG_LEVEL);
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
