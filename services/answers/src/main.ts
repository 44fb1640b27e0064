import { runService } from '@support-agent/shared';
import { loadAnswersConfig } from './config.js';
import { start } from './server.js';

runService('answers', {
  loadConfig: () => loadAnswersConfig(),
  logLevel: (c) => c.LOG_LEVEL,
  metrics: (c) => ({ port: c.METRICS_PORT, host: c.METRICS_HOST }),
  start,
});
