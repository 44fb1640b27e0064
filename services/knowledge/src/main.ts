import { createLogger, onShutdownSignal, runMain } from '@support-agent/shared';
import { loadKnowledgeConfig } from './config.js';
import { start } from './server.js';

runMain('knowledge', async () => {
  const config = loadKnowledgeConfig();
  const logger = createLogger('knowledge', config.logLevel);
  const server = await start(config, logger);
  onShutdownSignal(logger, server.stop);
});
