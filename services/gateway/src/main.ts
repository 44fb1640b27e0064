import { applyV8Flags, runService } from '@support-agent/shared';
import { loadGatewayConfig } from './config.js';
import { DEMO_KB } from './domain/demo-kb.js';
import { start, type GatewayHandle } from './server.js';

runService('gateway', {
  loadConfig: () => loadGatewayConfig(),
  prepare: (c) => applyV8Flags(c.V8_FLAGS),
  start,
  started: (gateway, c) =>
    printFirstStart(gateway, c.PUBLIC_BASE_URL ?? `http://localhost:${gateway.port}`),
});

/** Secrets created on an embedded first start go to stdout once, outside the JSON logs. */
function printFirstStart(gateway: GatewayHandle, baseUrl: string): void {
  const lines: string[] = [];
  if (gateway.generatedAdminToken) {
    lines.push(
      `Admin token (saved to ${gateway.generatedAdminToken.path}):`,
      `  ${gateway.generatedAdminToken.token}`,
      '',
    );
  }
  if (gateway.demo) {
    lines.push(
      `Demo organization "${gateway.demo.orgId}" created. API key with every scope (shown only once):`,
      `  ${gateway.demo.key}`,
      '',
      `Its knowledge base (${DEMO_KB.length} entries about the fictional product "Acme Desk")`,
      'is loaded into the knowledge service in the background.',
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${gateway.demo.key}" \\`,
      `    "${baseUrl}/api/v1/agent/kb/search?query=password+reset"`,
      '',
    );
  }
  if (lines.length === 0) return;
  lines.pop();
  const width = Math.max(...lines.map((l) => l.length));
  const bar = '─'.repeat(width + 2);
  const box = [`┌${bar}┐`, ...lines.map((l) => `│ ${l.padEnd(width)} │`), `└${bar}┘`];
  process.stdout.write(`\n${box.join('\n')}\n\n`);
}
