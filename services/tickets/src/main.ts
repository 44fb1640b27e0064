import { runService } from '@support-agent/shared';
import { loadTicketsConfig } from './config.js';
import { start } from './server.js';

runService('tickets', {
  loadConfig: () => loadTicketsConfig(),
  start,
});
