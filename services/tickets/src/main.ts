// First, and alone: holds V8's young generation at its start-up size (V8_SEMI_SPACE_MAX_MB).
// The rest is imported only then, because loading modules would already grow it.
import '@support-agent/shared/young-generation';

const { capSemiSpace, runService } = await import('@support-agent/shared');
const { loadTicketsConfig } = await import('./config.js');
const { start } = await import('./server.js');

runService('tickets', {
  loadConfig: () => loadTicketsConfig(),
  start,
  started: (_server, c) => capSemiSpace(c.V8_SEMI_SPACE_MAX_MB),
});
