import { createLogger, onShutdownSignal, runMain } from '@support-agent/shared';
import { loadTicketsConfig } from './config.js';
import { start } from './server.js';

runMain('tickets', async () => {
  const config = loadTicketsConfig();
  const logger = createLogger('tickets', config.LOG_LEVEL);
  const server = await start(config, logger);
  onShutdownSignal(logger, () => server.stop());
});
