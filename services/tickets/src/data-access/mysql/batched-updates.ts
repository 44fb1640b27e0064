// Ticket updates (triage results, status changes) in shared transactions (shared-transactions.ts):
// the updates of one batch are decided and written in one transaction of two round trips.
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { toOutboxMessage, type TicketEvent } from '../../domain/events.js';
import type { TicketChange, UpdateOutcome } from '../../domain/ports.js';
import type { Ticket } from '../../domain/ticket.js';
import type { SharedResult } from './shared-transactions.js';

/** One call of TicketRepository.update. */
export interface UpdateRequest {
  orgId: string;
  /** The ticket's number in the organization. */
  ticketId: number;
  decide: (current: Ticket) => TicketChange | null;
  onceKey?: string | undefined;
  /** The trace of the caller, for its events (the batch runs in another caller's context). */
  traceparent?: string | null | undefined;
}

/** What a shared transaction reports for one request: its outcome, or the error its decide threw. */
export type UpdateResult = SharedResult<UpdateOutcome>;

interface TicketRow extends RowDataPacket {
  id: number | string;
  number: number | string;
  org_id: string;
}

/**
 * Applies `requests` in order in one transaction on `conn` (multiple statements allowed):
 * START TRANSACTION, the tickets locked and the once-keys already recorded read in one round
 * trip; each request decided against the ticket as the requests before it left it; every
 * write and the COMMIT in a second round trip. A request whose decide throws changes nothing
 * and gets its error. READ COMMITTED: the once-key read takes no gap locks, and a key recorded
 * concurrently (impossible while the ticket row is locked, but guarded anyway) fails the
 * batch's INSERT with a duplicate key, so the caller runs it again.
 */
export async function updateInOneTransaction(
  conn: PoolConnection,
  requests: UpdateRequest[],
  columns: string,
  toTicket: (row: TicketRow) => Ticket,
): Promise<UpdateResult[]> {
  const numbersByOrg = new Map<string, Set<number>>();
  for (const r of requests)
    numbersByOrg.set(r.orgId, (numbersByOrg.get(r.orgId) ?? new Set()).add(r.ticketId));
  const which = [...numbersByOrg.keys()].map(() => '(org_id = ? AND number IN (?))').join(' OR ');
  const whichParams = [...numbersByOrg].flatMap(([orgId, numbers]) => [orgId, [...numbers]]);
  const keys = requests.flatMap((r) => (r.onceKey === undefined ? [] : [r.onceKey]));
  const [read] = await conn.query<RowDataPacket[][]>(
    [
      'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'START TRANSACTION',
      // Locked in key order, whatever the organizations: concurrent batches never deadlock.
      `SELECT ${columns} FROM tickets WHERE ${which} ORDER BY id FOR UPDATE`,
      keys.length > 0
        ? 'SELECT event_id FROM tickets_triage_applied WHERE event_id IN (?)'
        : 'SELECT NULL AS event_id FROM DUAL WHERE FALSE',
    ].join(';\n'),
    keys.length > 0 ? [...whichParams, keys] : whichParams,
  );
  const tickets = new Map<string, Ticket>();
  for (const row of read[2] as TicketRow[])
    tickets.set(ticketKey(row.org_id, Number(row.number)), toTicket(row));
  const applied = new Set(read[3]!.map((r) => String(r.event_id)));

  const results: UpdateResult[] = [];
  const statements: string[] = [];
  const params: unknown[] = [];
  const recorded: unknown[][] = [];
  const outbox: unknown[][] = [];
  for (const request of requests) {
    const current = tickets.get(ticketKey(request.orgId, request.ticketId));
    if (!current) {
      results.push({ outcome: { kind: 'not_found' } });
      continue;
    }
    if (request.onceKey !== undefined && applied.has(request.onceKey)) {
      results.push({ outcome: { kind: 'already_applied', ticket: current } });
      continue;
    }
    let change: TicketChange | null;
    try {
      change = request.decide(current);
    } catch (error) {
      results.push({ error });
      continue;
    }
    if (request.onceKey !== undefined) {
      applied.add(request.onceKey);
      recorded.push([request.onceKey, current.globalId, new Date()]);
    }
    if (!change) {
      results.push({ outcome: { kind: 'unchanged', ticket: current } });
      continue;
    }
    const next = change.next;
    statements.push(
      `UPDATE tickets SET status = ?, priority = ?, category = ?, ai_summary = ?, ai_answer = ?, updated_at = ?
       WHERE id = ?`,
    );
    params.push(
      next.status,
      next.priority,
      next.category,
      next.aiSummary,
      next.aiAnswer,
      next.updatedAt,
      current.globalId,
    );
    outbox.push(...outboxRows(change.events, next.updatedAt, request.traceparent));
    tickets.set(ticketKey(request.orgId, request.ticketId), next);
    results.push({ outcome: { kind: 'updated', ticket: next } });
  }
  if (recorded.length > 0) {
    statements.push(
      'INSERT INTO tickets_triage_applied (event_id, ticket_id, applied_at) VALUES ?',
    );
    params.push(recorded);
  }
  if (outbox.length > 0) {
    statements.push(
      'INSERT INTO tickets_outbox (event_id, subject, payload, created_at, traceparent) VALUES ?',
    );
    params.push(outbox);
  }
  statements.push('COMMIT');
  await conn.query<ResultSetHeader[]>(statements.join(';\n'), params);
  return results;
}

function ticketKey(orgId: string, number: number): string {
  return `${orgId}\u0000${number}`;
}

function outboxRows(
  events: TicketEvent[],
  at: Date,
  traceparent: string | null | undefined,
): unknown[][] {
  return events.map((e) => {
    const m = toOutboxMessage(e);
    return [m.eventId, m.subject, m.payload, at, traceparent ?? null];
  });
}
