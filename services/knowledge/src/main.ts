import { applyV8Flags, capSemiSpace, runService } from '@support-agent/shared';
import { loadKnowledgeConfig } from './config.js';
import { start } from './server.js';

runService('knowledge', {
  loadConfig: () => loadKnowledgeConfig(),
  prepare: (c) => {
    applyV8Flags(c.V8_FLAGS);
    capSemiSpace(c.V8_SEMI_SPACE_MAX_MB);
  },
  start,
});
