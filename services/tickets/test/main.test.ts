// The process entry point: refuses to start without its backends, starts embedded, stops on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { checkHealth } from '@support-agent/shared';
import { freePort } from '../../../test/support/backends.js';
import { newOrg, ticketsClient } from './helpers.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

function runMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('main', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('when started alone without MYSQL_URL, then it exits 1 with a message naming the variable', async () => {
    const run = runMain({ REDIS_URL: 'redis://127.0.0.1:1', NATS_URL: 'nats://127.0.0.1:1' });
    assert.equal(await run.exited, 1);
    assert.match(
      run.output().stderr,
      /tickets: failed to start: invalid configuration:\n\s+MYSQL_URL: MYSQL_URL is required/,
    );
  });

  it('when started embedded, then it serves, reports healthy, and exits 0 on SIGTERM after a graceful stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tickets-main-'));
    dirs.push(dataDir);
    const port = await freePort();
    const run = runMain({
      EMBEDDED: 'true',
      DATA_DIR: dataDir,
      TICKETS_ADDR: `127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
    });
    try {
      const address = `127.0.0.1:${port}`;
      const until = Date.now() + 20_000;
      while (!(await checkHealth(address, 'supportagent.tickets.v1.TicketsService'))) {
        assert.ok(Date.now() < until, `service did not become healthy: ${run.output().stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const client = ticketsClient(port);
      const { ticketId } = await client.createTicket({ orgId: newOrg(), content: 'via main' });
      assert.ok(ticketId > 0);
      client.close();
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
      const logs = run
        .output()
        .stdout.split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string; level: string });
      assert.ok(logs.some((l) => l.msg === 'tickets service stopped'));
      assert.ok(
        logs.every((l) => l.level !== 'error'),
        'no errors logged',
      );
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
