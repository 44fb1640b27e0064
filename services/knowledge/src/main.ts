// First, and alone: holds V8's young generation at its start-up size (V8_SEMI_SPACE_MAX_MB).
// The rest is imported only then, because loading modules would already grow it: a static
// import graph is loaded as a whole before any of it runs.
import '@support-agent/shared/young-generation';

const { applyV8Flags, capSemiSpace, runService } = await import('@support-agent/shared');
const { loadKnowledgeConfig } = await import('./config.js');
const { start } = await import('./server.js');

runService('knowledge', {
  loadConfig: () => loadKnowledgeConfig(),
  prepare: (c) => applyV8Flags(c.V8_FLAGS),
  start,
  // After the index is loaded: a start-up replay runs in one stretch, held at the start-up size.
  started: (_server, c) => capSemiSpace(c.V8_SEMI_SPACE_MAX_MB),
});
