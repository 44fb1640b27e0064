// Ticket creates in shared transactions (shared-transactions.ts): the creates of one batch,
// each ticket with its outbox rows, written in one multi-statement query ending in COMMIT.
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { toOutboxMessage, type TicketEvent } from '../../domain/events.js';
import type { InsertOutcome } from '../../domain/ports.js';
import type { Ticket, TicketDraft } from '../../domain/ticket.js';

/** A parameter of a statement. */
export type StatementParam = string | number | Date | Buffer | null;

/** One call of TicketRepository.insert, its events serialized around the id to come. */
export interface CreateRequest {
  draft: TicketDraft;
  /** Per event: event id, subject, payload before the id, payload after it, created_at, traceparent. */
  outbox: StatementParam[][];
}

/**
 * The request for `draft` and the events `eventsFor` derives from it. The events are serialized
 * before the store assigns the id, with a placeholder in the envelope's `ticket_id` that the
 * statement replaces by the new id, so each payload is byte for byte what JSON.stringify makes
 * of the event with its real id.
 */
export function createRequest(
  draft: TicketDraft,
  eventsFor: (ticket: Ticket) => TicketEvent[],
): CreateRequest {
  const events = eventsFor({ ...draft, id: ID_PLACEHOLDER });
  const outbox = events.map((e): StatementParam[] => {
    const m = toOutboxMessage(e);
    const [before, after] = splitAtTicketId(m.payload);
    return [m.eventId, m.subject, before, after, draft.createdAt, m.traceparent ?? null];
  });
  return { draft, outbox };
}

const TICKET_INSERT = `INSERT INTO tickets (org_id, content, author_name, idempotency_key, status,
  priority, category, ai_summary, ai_answer, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/** How each request of a batch is answered. */
type Plan =
  | { insertedBy: number } // index of its INSERT statement's result
  | { sameAs: number } // index of the earlier request of the batch with its key
  | { existing: number }; // the ticket that already held its key

/**
 * Writes `requests` in one transaction on `conn` in one round trip: START TRANSACTION; per
 * ticket its INSERT and `SET @tN = LAST_INSERT_ID()`; one INSERT of every outbox row, each
 * payload completed with its ticket's variable (a ticket's rows in the order of its events,
 * the tickets in the order of the requests); COMMIT. Ids come from each INSERT's own result
 * (never assumed consecutive: MySQL 8 interleaves auto-increment values across concurrent
 * inserts).
 *
 * Idempotency keys: a request whose key an earlier request of the batch holds is answered as
 * that one's duplicate; a key in `taken` (looked up after a failed attempt) as the ticket that
 * holds it. A key taken outside the batch and not in `taken` fails the whole query with
 * ER_DUP_ENTRY: the transaction is rolled back and the caller runs the batch again with the
 * batch's keys looked up (`findTakenKeys`).
 */
export async function createInOneTransaction(
  conn: PoolConnection,
  requests: CreateRequest[],
  taken: ReadonlyMap<string, number> = new Map(),
): Promise<InsertOutcome[]> {
  const statements = ['START TRANSACTION'];
  const params: StatementParam[] = [];
  const outboxRows: string[] = [];
  const outboxParams: StatementParam[] = [];
  const firstWithKey = new Map<string, number>();
  const plans = requests.map((request, index): Plan => {
    const { draft, outbox } = request;
    const key = keyOf(draft);
    if (key !== undefined) {
      const existing = taken.get(key);
      if (existing !== undefined) return { existing };
      const first = firstWithKey.get(key);
      if (first !== undefined) return { sameAs: first };
      firstWithKey.set(key, index);
    }
    const insertedBy = statements.length;
    statements.push(TICKET_INSERT, `SET @t${index} = LAST_INSERT_ID()`);
    params.push(
      draft.orgId,
      draft.content,
      draft.authorName,
      draft.idempotencyKey,
      draft.status,
      draft.priority,
      draft.category,
      draft.aiSummary,
      draft.aiAnswer,
      draft.createdAt,
      draft.updatedAt,
    );
    for (const row of outbox) {
      outboxRows.push(`(?, ?, CONCAT(?, @t${index}, ?), ?, ?)`);
      outboxParams.push(...row);
    }
    return { insertedBy };
  });
  if (outboxRows.length > 0) {
    statements.push(
      `INSERT INTO tickets_outbox (event_id, subject, payload, created_at, traceparent)
       VALUES ${outboxRows.join(', ')}`,
    );
    params.push(...outboxParams);
  }
  const ids: number[] = [];
  if (statements.length > 1) {
    statements.push('COMMIT');
    const [results] = await conn.query<ResultSetHeader[]>(statements.join(';\n'), params);
    plans.forEach((plan, i) => {
      if ('insertedBy' in plan) ids[i] = Number(results[plan.insertedBy]!.insertId);
    });
  }
  return plans.map((plan, i): InsertOutcome => {
    if ('insertedBy' in plan)
      return { kind: 'created', ticket: { ...requests[i]!.draft, id: ids[i]! } };
    if ('sameAs' in plan) return { kind: 'duplicate', ticketId: ids[plan.sameAs]! };
    return { kind: 'duplicate', ticketId: plan.existing };
  });
}

/**
 * The tickets that hold the idempotency keys of `requests`, by keyOf: one SELECT per key (the
 * database's own comparison of org and key, as the unique key applies it), all in one query.
 */
export async function findTakenKeys(
  conn: PoolConnection,
  requests: CreateRequest[],
): Promise<Map<string, number>> {
  const keyed = new Map<string, TicketDraft>();
  for (const { draft } of requests) {
    const key = keyOf(draft);
    if (key !== undefined) keyed.set(key, draft);
  }
  const taken = new Map<string, number>();
  if (keyed.size === 0) return taken;
  const select = 'SELECT id FROM tickets WHERE org_id = ? AND idempotency_key = ?';
  const [results] = await conn.query<RowDataPacket[] | RowDataPacket[][]>(
    Array(keyed.size).fill(select).join(';\n'),
    [...keyed.values()].flatMap((d) => [d.orgId, d.idempotencyKey]),
  );
  // One statement answers with its rows, several with a list of row sets.
  const rowSets = keyed.size === 1 ? [results as RowDataPacket[]] : (results as RowDataPacket[][]);
  [...keyed.keys()].forEach((key, i) => {
    const row = rowSets[i]![0];
    if (row) taken.set(key, Number(row.id));
  });
  return taken;
}

/** A draft's (org, idempotency key) as one map key; undefined without a key. */
function keyOf(draft: TicketDraft): string | undefined {
  return draft.idempotencyKey === null
    ? undefined
    : JSON.stringify([draft.orgId, draft.idempotencyKey]);
}

/** The id events are serialized with before the store assigns the real one (ids start at 1). */
const ID_PLACEHOLDER = 0;
const ID_FIELD = `"ticket_id":${ID_PLACEHOLDER}`;

/**
 * An event's JSON cut around the value of its envelope's `ticket_id`. JSON.stringify writes
 * the envelope's keys first and escapes every quote inside strings, so the first
 * `"ticket_id":0` is the envelope's own (the id appears nowhere else in an event).
 */
export function splitAtTicketId(payload: string): [string, string] {
  const at = payload.indexOf(ID_FIELD);
  if (at < 0) throw new Error('event payload without an envelope ticket_id');
  const cut = at + ID_FIELD.length - String(ID_PLACEHOLDER).length;
  return [payload.slice(0, cut), payload.slice(at + ID_FIELD.length)];
}
