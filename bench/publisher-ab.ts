// CPU per event of the outbox's JetStream publisher (packages/events), this tree's next to
// another build's, in one process against one real NATS server: each publisher is handed
// batches of `batch` tickets.created events, one batch at a time as the relay hands them
// (awaiting each batch's PubAcks), in alternating rounds; CPU is the load process's own
// (process.cpuUsage) over each round, so it is the publisher's client side only. Medians are
// compared. Not a test.
//
//   git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npx tsc -b packages/events)
//   npx tsx bench/publisher-ab.ts [rounds=8] [batches=1000] [batch=10] [base=/tmp/base]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import * as current from '@support-agent/events';
import { sleep } from '@support-agent/shared';
import { startNats } from '../test/support/backends.js';

const ROUNDS = Number(process.argv[2] ?? 8);
const BATCHES = Number(process.argv[3] ?? 1000);
const BATCH = Number(process.argv[4] ?? 10);
const BASE = resolve(process.argv[5] ?? '/tmp/base');

const other = (await import(
  pathToFileURL(join(BASE, 'packages/events/dist/index.js')).href
)) as typeof current;
const logger = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'publisher-ab-'));
const nats = await startNats(join(dir, 'nats'));
const publishers = {
  base: new other.JetStreamEventPublisher(nats.url, logger),
  current: new current.JetStreamEventPublisher(nats.url, logger),
};
type Name = keyof typeof publishers;

let ticketId = 0;
const AT = '2026-11-20T10:00:00.000Z';
function batchOfEvents(): current.OutboxMessage[] {
  return Array.from({ length: BATCH }, () =>
    current.toOutboxMessage(
      current.newTicketEvent(
        'tickets.created',
        { org_id: 'bench', ticket_id: ++ticketId, ticket_number: ticketId, occurred_at: AT },
        {
          content: 'My export to CSV fails with a timeout after 30 seconds.',
          author_name: null,
          status: 'open',
          priority: 'medium',
          category: null,
          created_at: AT,
        },
      ),
    ),
  );
}

try {
  // Both connected and the stream there (they connect in the background).
  for (const p of Object.values(publishers))
    while ((await p.publish(batchOfEvents())).error !== undefined) await sleep(100);
  const perEvent: Record<Name, number[]> = { base: [], current: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order: Name[] = round % 2 === 0 ? ['base', 'current'] : ['current', 'base'];
    for (const name of order) {
      const batches = Array.from({ length: BATCHES }, batchOfEvents);
      const before = process.cpuUsage();
      for (const b of batches) {
        const report = await publishers[name].publish(b);
        if (report.error !== undefined) throw report.error;
      }
      const used = process.cpuUsage(before);
      perEvent[name].push((used.user + used.system) / 1000 / (BATCHES * BATCH));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  for (const name of ['base', 'current'] as const)
    console.log(
      `${name.padEnd(8)} CPU ms per event: median ${median(perEvent[name]).toFixed(4)} (rounds ${perEvent[name].map((x) => x.toFixed(4)).join(' ')})`,
    );
  console.log(
    `current ÷ base: ${(median(perEvent.current) / median(perEvent.base)).toFixed(3)} (${ROUNDS} rounds of ${BATCHES} batches of ${BATCH})`,
  );
} finally {
  for (const p of Object.values(publishers)) await p.close();
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}
