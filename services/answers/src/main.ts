import { applyV8Flags, runService } from '@support-agent/shared';
import { loadAnswersConfig } from './config.js';
import { start } from './server.js';

runService('answers', {
  loadConfig: () => loadAnswersConfig(),
  prepare: (c) => applyV8Flags(c.V8_FLAGS),
  start,
});
