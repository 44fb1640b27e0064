import { runService } from '@support-agent/shared';
import { loadDigestConfig } from './config.js';
import { start } from './server.js';

// The digest serves its metrics from start() (per-instance registry, DIGEST_METRICS_PORT).
runService('digest', {
  loadConfig: () => loadDigestConfig(),
  serveMetrics: false,
  start,
});
