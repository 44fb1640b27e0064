import { createLogger, onShutdownSignal, runMain } from '@support-agent/shared';
import { loadDigestConfig } from './config.js';
import { start } from './server.js';

runMain('digest', async () => {
  const config = loadDigestConfig();
  const logger = createLogger('digest', config.LOG_LEVEL);
  const server = await start(config, logger);
  onShutdownSignal(logger, () => server.stop());
});
