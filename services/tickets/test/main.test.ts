// The process entry point: refuses to start without its backends, starts embedded, stops on SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../../../test/support/backends.js';
import { assertGracefulStop, runMain, waitUntilServing } from '../../../test/support/process.js';
import { newOrg, ticketsClient } from './helpers.js';

describe('main', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('when started alone without MYSQL_URL, then it exits 1 with a message naming the variable', async () => {
    const run = runMain('tickets', {
      REDIS_URL: 'redis://127.0.0.1:1',
      NATS_URL: 'nats://127.0.0.1:1',
    });
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
    const run = runMain('tickets', {
      EMBEDDED: 'true',
      DATA_DIR: dataDir,
      TICKETS_ADDR: `127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
    });
    try {
      const address = `127.0.0.1:${port}`;
      await waitUntilServing(run, address, 'supportagent.tickets.v1.TicketsService');
      const client = ticketsClient(port);
      const { ticketId } = await client.createTicket({ orgId: newOrg(), content: 'via main' });
      assert.ok(ticketId > 0);
      client.close();
      await assertGracefulStop(run, 'tickets service stopped');
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
