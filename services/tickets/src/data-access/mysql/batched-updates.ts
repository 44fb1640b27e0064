// Ticket updates (triage results, status changes) grouped into shared transactions: calls that
// arrive while earlier ones are being committed wait and then go together, in one transaction
// of two round trips. Under load a transaction carries many updates (one commit, one fsync);
// alone, an update is not delayed.
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { currentTraceparent } from '@support-agent/shared';
import { toOutboxMessage, type TicketEvent } from '../../domain/events.js';
import type { TicketChange, UpdateOutcome } from '../../domain/ports.js';
import type { Ticket } from '../../domain/ticket.js';

/** One call of TicketRepository.update. */
export interface UpdateRequest {
  orgId: string;
  ticketId: number;
  decide: (current: Ticket) => TicketChange | null;
  onceKey?: string | undefined;
  /** The trace of the caller, for its events (the batch runs in another caller's context). */
  traceparent?: string | null | undefined;
}

/** What a shared transaction reports for one request: its outcome, or the error its decide threw. */
export type UpdateResult = { outcome: UpdateOutcome } | { error: unknown };

interface Queued {
  request: UpdateRequest;
  resolve: (outcome: UpdateOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Runs update requests through `commit` (one transaction per batch): at most `parallel`
 * batches in flight; what arrives meanwhile waits and becomes the next batch (up to `maxBatch`).
 */
export class UpdateBatcher {
  private queue: Queued[] = [];
  private inFlight = 0;

  constructor(
    private readonly commit: (requests: UpdateRequest[]) => Promise<UpdateResult[]>,
    private readonly maxBatch = 100,
    private readonly parallel = 2,
  ) {}

  submit(request: UpdateRequest): Promise<UpdateOutcome> {
    const traced = { ...request, traceparent: currentTraceparent() };
    return new Promise((resolve, reject) => {
      this.queue.push({ request: traced, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.parallel && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: Queued[]): Promise<void> {
    try {
      const results = await this.commit(batch.map((q) => q.request));
      batch.forEach((q, i) => {
        const r = results[i]!;
        if ('outcome' in r) q.resolve(r.outcome);
        else q.reject(r.error);
      });
    } catch (err) {
      for (const q of batch) q.reject(err);
    }
  }
}

interface TicketRow extends RowDataPacket {
  id: number | string;
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
  const ids = [...new Set(requests.map((r) => r.ticketId))];
  const keys = requests.flatMap((r) => (r.onceKey === undefined ? [] : [r.onceKey]));
  const [read] = await conn.query<RowDataPacket[][]>(
    [
      'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'START TRANSACTION',
      `SELECT ${columns} FROM tickets WHERE id IN (?) ORDER BY id FOR UPDATE`,
      keys.length > 0
        ? 'SELECT event_id FROM tickets_triage_applied WHERE event_id IN (?)'
        : 'SELECT NULL AS event_id FROM DUAL WHERE FALSE',
    ].join(';\n'),
    keys.length > 0 ? [ids, keys] : [ids],
  );
  const tickets = new Map<number, Ticket>();
  for (const row of read[2] as TicketRow[]) tickets.set(Number(row.id), toTicket(row));
  const applied = new Set(read[3]!.map((r) => String(r.event_id)));

  const results: UpdateResult[] = [];
  const statements: string[] = [];
  const params: unknown[] = [];
  const recorded: unknown[][] = [];
  const outbox: unknown[][] = [];
  for (const request of requests) {
    const current = tickets.get(request.ticketId);
    if (!current || current.orgId !== request.orgId) {
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
      recorded.push([request.onceKey, request.ticketId, new Date()]);
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
      next.id,
    );
    outbox.push(...outboxRows(change.events, next.updatedAt, request.traceparent));
    tickets.set(next.id, next);
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
