import { runService } from '@support-agent/shared';
import { loadTicketsConfig } from './config.js';
import { start } from './server.js';

runService('tickets', {
  loadConfig: () => loadTicketsConfig(),
  logLevel: (c) => c.LOG_LEVEL,
  metrics: (c) => ({ port: c.METRICS_PORT, host: c.METRICS_HOST }),
  start,
});
