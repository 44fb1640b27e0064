import { createLogger, onShutdownSignal, runMain } from '@support-agent/shared';
import { loadAnswersConfig } from './config.js';
import { start } from './server.js';

runMain('answers', async () => {
  const config = loadAnswersConfig();
  const logger = createLogger('answers', config.LOG_LEVEL);
  const server = await start(config, logger);
  onShutdownSignal(logger, () => server.stop());
});
