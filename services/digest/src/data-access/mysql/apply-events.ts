// Applying ticket events to the aggregates in MySQL, many in one transaction of two round trips.
import { type Pool } from '@support-agent/shared';
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { applyTicketEvent, type TicketAggregate } from '../../domain/aggregate.js';
import type { TicketEvent } from '../../domain/events.js';
import type { ApplyOutcome } from '../../domain/ports.js';
import { inTransaction } from './transactions.js';

export const TICKET_COLUMNS =
  'org_id, ticket_id, week_start, created_at, content, category, status, status_at, triaged_at, answered, ai_summary, ai_answer';

/** The aggregate columns a locked row's upsert overwrites (all but the key). */
const UPDATE_COLUMNS = TICKET_COLUMNS.split(', ')
  .slice(2)
  .map((c) => `${c} = VALUES(${c})`)
  .join(', ');

/**
 * Applies `events` in one transaction: each event id not processed before is recorded in
 * digest_processed_events and folded, in order, into its ticket's row and week count; an id
 * seen before (or twice in the batch) changes nothing and is reported 'duplicate'.
 *
 * Two round trips whatever the batch size: the reads (processed ids; the batch's ticket rows,
 * locked) as one multi-statement query that also starts the transaction, then every write and
 * the COMMIT as another. Rows that did not exist are inserted with a plain INSERT: under READ
 * COMMITTED a missing row takes no lock, so a concurrent batch may insert it first, and the
 * duplicate key (like an event id recorded concurrently) then runs the batch again, which now
 * finds and locks the row. Statements are built from constants and placeholders only.
 */
export function applyEvents(pool: Pool, events: TicketEvent[]): Promise<ApplyOutcome[]> {
  if (events.length === 0) return Promise.resolve([]);
  return inTransaction(pool, (conn) => applyInTransaction(conn, events), {
    retryDuplicates: true,
    inOneQuery: true,
    // Concurrent batches racing for a new ticket row or event id run again; give them room.
    attempts: 8,
  });
}

async function applyInTransaction(
  conn: PoolConnection,
  events: TicketEvent[],
): Promise<ApplyOutcome[]> {
  const ids = [...new Set(events.map((e) => e.id))];
  const byOrg = new Map<string, Set<number>>();
  for (const e of events)
    byOrg.set(e.org_id, (byOrg.get(e.org_id) ?? new Set()).add(e.ticket_number));
  const orgs = [...byOrg.keys()].sort();
  // Primary-key lookups per organization (a row constructor IN is not a range on every server).
  const where = orgs.map(() => '(org_id = ? AND ticket_id IN (?))').join(' OR ');
  const [read] = await conn.query<RowDataPacket[][]>(
    [
      'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'START TRANSACTION',
      'SELECT event_id FROM digest_processed_events WHERE event_id IN (?)',
      `SELECT ${TICKET_COLUMNS} FROM digest_tickets WHERE ${where} ORDER BY org_id, ticket_id FOR UPDATE`,
    ].join(';\n'),
    [ids, ...orgs.flatMap((o) => [o, [...byOrg.get(o)!].sort((a, b) => a - b)])],
  );
  const seen = new Set(read[2]!.map((r) => String(r.event_id)));
  const current = new Map<string, TicketAggregate>();
  for (const r of read[3]!) {
    const t = toAggregate(r);
    current.set(ticketKey(t.orgId, t.ticketId), t);
  }

  const outcomes: ApplyOutcome[] = [];
  const fresh: string[] = [];
  const next = new Map<string, TicketAggregate>();
  const weeks = new Map<string, [orgId: string, weekStart: string, count: number]>();
  for (const event of events) {
    if (seen.has(event.id)) {
      outcomes.push('duplicate');
      continue;
    }
    seen.add(event.id);
    fresh.push(event.id);
    outcomes.push('applied');
    const k = ticketKey(event.org_id, event.ticket_number);
    const folded = applyTicketEvent(next.get(k) ?? current.get(k), event);
    next.set(k, folded.next);
    if (folded.countedWeek) {
      const wk = `${event.org_id}\u0000${folded.countedWeek}`;
      const week = weeks.get(wk) ?? [event.org_id, folded.countedWeek, 0];
      week[2]++;
      weeks.set(wk, week);
    }
  }
  if (fresh.length === 0) {
    await conn.query('COMMIT');
    return outcomes;
  }

  // Sorted, so concurrent batches take their locks in one order.
  const rows = [...next.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const inserted = rows.filter(([k]) => !current.has(k)).map(([, t]) => ticketRow(t));
  const updated = rows.filter(([k]) => current.has(k)).map(([, t]) => ticketRow(t));
  const counts = [...weeks.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, w]) => w);
  const statements: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, values: unknown[]) => {
    statements.push(sql);
    params.push(values);
  };
  const now = new Date();
  add(
    'INSERT INTO digest_processed_events (event_id, processed_at) VALUES ?',
    fresh.map((id) => [id, now]),
  );
  if (inserted.length > 0) add(`INSERT INTO digest_tickets (${TICKET_COLUMNS}) VALUES ?`, inserted);
  if (updated.length > 0) {
    // Only rows this transaction holds locked: the upsert always takes its UPDATE branch.
    add(
      `INSERT INTO digest_tickets (${TICKET_COLUMNS}) VALUES ? ON DUPLICATE KEY UPDATE ${UPDATE_COLUMNS}`,
      updated,
    );
  }
  if (counts.length > 0) {
    add(
      `INSERT INTO digest_weeks (org_id, week_start, ticket_count) VALUES ?
       ON DUPLICATE KEY UPDATE ticket_count = ticket_count + VALUES(ticket_count)`,
      counts,
    );
  }
  statements.push('COMMIT');
  await conn.query<ResultSetHeader[]>(statements.join(';\n'), params);
  return outcomes;
}

function ticketKey(orgId: string, ticketId: number): string {
  return `${orgId}\u0000${ticketId}`;
}

/** A digest_tickets row (TICKET_COLUMNS) as the aggregate. */
export function toAggregate(r: RowDataPacket): TicketAggregate {
  return {
    orgId: String(r.org_id),
    ticketId: Number(r.ticket_id),
    weekStart: (r.week_start as string | null) ?? null,
    createdAt: (r.created_at as Date | null) ?? null,
    content: (r.content as string | null) ?? null,
    category: (r.category as string | null) ?? null,
    status: (r.status as string | null) ?? null,
    statusAt: (r.status_at as Date | null) ?? null,
    triagedAt: (r.triaged_at as Date | null) ?? null,
    answered: Number(r.answered) === 1,
    aiSummary: (r.ai_summary as string | null) ?? null,
    aiAnswer: (r.ai_answer as string | null) ?? null,
  };
}

/** The values of TICKET_COLUMNS, in order. */
export function ticketRow(t: TicketAggregate): unknown[] {
  return [
    t.orgId,
    t.ticketId,
    t.weekStart,
    t.createdAt,
    t.content,
    t.category,
    t.status,
    t.statusAt,
    t.triagedAt,
    t.answered ? 1 : 0,
    t.aiSummary,
    t.aiAnswer,
  ];
}
