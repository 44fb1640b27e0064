// The backfill command: replaying the stream (or reading the tickets table) gives exactly the
// aggregates the live consumer built.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase } from '../../../test/support/mysql.js';
import type { NatsHandle } from '../../../test/support/backends.js';
import { addDays, lastCompleteWeek, weekStartOf } from '../src/domain/iso-week.js';
import {
  EventPublisher,
  eventually,
  inWeek,
  newOrg,
  processedCount,
  queryRows,
  startDigest,
  startOwnBackends,
  statusChangedEvent,
  ticketEvents,
  type OwnBackends,
  type RunningDigest,
  type TestDatabase,
  type TicketEventEnvelope,
} from './helpers.js';
import { stopAll } from '../../../test/support/testing.js';

const CLI = fileURLToPath(new URL('../src/cli/backfill.ts', import.meta.url));

function runBackfill(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The summary line the command prints last. */
function summaryOf(stdout: string): Record<string, unknown> {
  const line = stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"mode"'))
    .pop();
  assert.ok(line, `no summary in: ${stdout}`);
  return JSON.parse(line) as Record<string, unknown>;
}

interface Snapshot {
  weeks: Array<{ org_id: string; week_start: string; ticket_count: number }>;
  tickets: Array<Record<string, unknown>>;
}

describe('backfill', () => {
  let own: OwnBackends;
  let db: TestDatabase;
  let ticketsDb: TestDatabase;
  let nats: NatsHandle;
  let svc: RunningDigest | undefined;
  let env: Record<string, string>;
  const orgs = [newOrg('bf1'), newOrg('bf2'), newOrg('bf3')];
  const lastWeek = lastCompleteWeek(new Date());
  const weeks = [addDays(lastWeek, -14), addDays(lastWeek, -7), lastWeek, weekStartOf(new Date())];
  const all: TicketEventEnvelope[][] = [];

  async function snapshot(): Promise<Snapshot> {
    return {
      weeks: (
        await queryRows<Snapshot['weeks'][number]>(
          db.url,
          'SELECT org_id, week_start, ticket_count FROM digest_weeks ORDER BY org_id, week_start',
        )
      ).map((w) => ({
        ...w,
        ticket_count: Number(w.ticket_count),
      })),
      tickets: await queryRows(
        db.url,
        'SELECT org_id, ticket_id, week_start, created_at, content, category, status, answered, ai_summary FROM digest_tickets ORDER BY org_id, ticket_id',
      ),
    };
  }

  before(async () => {
    own = await startOwnBackends('bf');
    ({ db, nats } = own);
    ticketsDb = await createTestDatabase('tickets_bf');
    env = { MYSQL_URL: db.url, NATS_URL: nats.url };

    // Tickets over four weeks; some staff status changes; every event also stored twice.
    orgs.forEach((org, o) =>
      weeks.forEach((week, w) => {
        for (let i = 0; i < 3 + o + w; i++) {
          const events = ticketEvents(
            org,
            `Org ${o} week ${w} question ${i}`,
            inWeek(week, i % 7, 6 + (i % 12)),
            i % 2 ? { answered: i % 3 === 0 } : undefined,
          );
          if (i % 5 === 0)
            events.push(
              statusChangedEvent(
                org,
                events[0]!.ticket_id,
                inWeek(week, 6, 23),
                'open',
                'in_progress',
              ),
            );
          all.push(events);
        }
      }),
    );
    const publisher = await EventPublisher.connect(nats.url);
    await publisher.publish(all.flat());
    await publisher.publish(all.flat(), (e) => `${e.id}#copy`);
    await publisher.close();
  });

  after(() => stopAll(svc, own, ticketsDb));

  it('when the stream is replayed from the start, then the aggregates are identical to the live consumer', async () => {
    svc = await startDigest({ ...env, DIGEST_EMBEDDINGS: 'lexical' });
    const ids = all.flat().map((e) => e.id);
    await eventually(
      async () => ((await processedCount(db.url, ids)) === ids.length ? true : undefined),
      20_000,
      'the live consumer',
    );
    const live = await snapshot();
    assert.equal(
      live.weeks.reduce((n, w) => n + w.ticket_count, 0),
      all.length,
    );
    await svc.stop();
    svc = undefined;

    const res = await runBackfill(['--from-stream'], env);
    assert.equal(res.code, 0, res.stderr);
    const summary = summaryOf(res.stdout);
    assert.equal(summary.mode, 'from-stream');
    assert.equal(summary.applied, ids.length);
    assert.equal(summary.duplicates, ids.length);
    assert.equal(summary.tickets, all.length);
    assert.deepEqual(await snapshot(), live);
  });

  it('when the backfill runs while the service consumes, then counts stay exact and later events still count once', async () => {
    svc = await startDigest({ ...env, DIGEST_EMBEDDINGS: 'lexical' });
    const before = await snapshot();
    const res = await runBackfill(['--from-stream'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(await snapshot(), before);

    const extra = ticketEvents(orgs[0]!, 'One more after the backfill', inWeek(lastWeek, 3));
    const publisher = await EventPublisher.connect(nats.url);
    await publisher.publish(extra);
    await publisher.close();
    const key = (w: Snapshot['weeks'][number]) => `${w.org_id}/${w.week_start}`;
    const expected = before.weeks.map((w) =>
      key(w) === `${orgs[0]}/${lastWeek}` ? { ...w, ticket_count: w.ticket_count + 1 } : w,
    );
    await eventually(
      async () => {
        const now = await snapshot();
        return JSON.stringify(now.weeks) === JSON.stringify(expected) ? true : undefined;
      },
      15_000,
      'the new ticket counted',
    );
    await svc.stop();
    svc = undefined;
  });

  it('when rebuilt from the tickets table, then the week counts are identical and each ticket is known by its number', async () => {
    const live = await snapshot();
    // The tickets table's columns the backfill reads; each ticket's key differs from its number.
    await queryRows(
      ticketsDb.url,
      `CREATE TABLE tickets (
         id BIGINT UNSIGNED NOT NULL PRIMARY KEY, number BIGINT UNSIGNED NOT NULL,
         org_id VARCHAR(64) NOT NULL, content TEXT NOT NULL,
         status VARCHAR(20) NOT NULL, category VARCHAR(32) NULL, ai_summary TEXT NULL, ai_answer MEDIUMTEXT NULL,
         created_at DATETIME(3) NOT NULL, updated_at DATETIME(3) NOT NULL)`,
    );
    const rows = live.tickets.map((t, i) => [
      100_000 + i,
      t.ticket_id,
      t.org_id,
      t.content,
      t.status,
      t.category,
      t.ai_summary,
      t.answered ? 'An automatic answer.' : null,
      t.created_at,
      t.created_at,
    ]);
    await queryRows(
      ticketsDb.url,
      'INSERT INTO tickets (id, number, org_id, content, status, category, ai_summary, ai_answer, created_at, updated_at) VALUES ?',
      [rows],
    );

    const res = await runBackfill(['--from-mysql', ticketsDb.url], { MYSQL_URL: db.url });
    assert.equal(res.code, 0, res.stderr);
    const summary = summaryOf(res.stdout);
    assert.equal(summary.mode, 'from-mysql');
    assert.equal(summary.tickets, live.tickets.length);
    const rebuilt = await snapshot();
    assert.deepEqual(rebuilt.weeks, live.weeks);
    assert.deepEqual(
      rebuilt.tickets.map((t) => [
        t.org_id,
        t.ticket_id,
        t.week_start,
        t.status,
        Number(t.answered),
      ]),
      live.tickets.map((t) => [t.org_id, t.ticket_id, t.week_start, t.status, Number(t.answered)]),
    );
  });

  it('when called without a mode, then it exits 1 with the usage', async () => {
    const res = await runBackfill([], env);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /usage: backfill\.js --from-stream \| --from-mysql/);
  });
});
