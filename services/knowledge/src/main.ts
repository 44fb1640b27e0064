import {
  applyV8Flags,
  createLogger,
  onShutdownSignal,
  runMain,
  serveMetrics,
} from '@support-agent/shared';
import { loadKnowledgeConfig } from './config.js';
import { start } from './server.js';

runMain('knowledge', async () => {
  const config = loadKnowledgeConfig();
  applyV8Flags(config.v8Flags);
  const logger = createLogger('knowledge', config.logLevel);
  const metrics = await serveMetrics(
    { port: config.metricsPort ?? 0, host: config.metricsHost ?? '127.0.0.1' },
    logger,
  );
  const server = await start(config, logger);
  onShutdownSignal(logger, async () => {
    await server.stop();
    await metrics?.close();
  });
});
