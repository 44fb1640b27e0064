import { applyV8Flags, runService } from '@support-agent/shared';
import { loadKnowledgeConfig } from './config.js';
import { start } from './server.js';

runService('knowledge', {
  loadConfig: () => loadKnowledgeConfig(),
  prepare: (c) => applyV8Flags(c.v8Flags),
  logLevel: (c) => c.logLevel,
  metrics: (c) => ({ port: c.metricsPort ?? 0, host: c.metricsHost ?? '127.0.0.1' }),
  start,
});
