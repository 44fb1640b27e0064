import { applyV8Flags, runService } from '@support-agent/shared';
import { loadKnowledgeConfig } from './config.js';
import { start } from './server.js';

runService('knowledge', {
  loadConfig: () => loadKnowledgeConfig(),
  prepare: (c) => applyV8Flags(c.V8_FLAGS),
  start,
});
