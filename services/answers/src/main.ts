import { runService } from '@support-agent/shared';
import { loadAnswersConfig } from './config.js';
import { start } from './server.js';

runService('answers', {
  loadConfig: () => loadAnswersConfig(),
  start,
});
