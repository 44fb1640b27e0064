// Ticket creates in shared transactions (shared-transactions.ts): the creates of one batch,
// each ticket with its outbox rows, written in one multi-statement query ending in COMMIT.
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { toOutboxMessage, type TicketEvent } from '../../domain/events.js';
import type { InsertOutcome } from '../../domain/ports.js';
import type { Ticket, TicketDraft } from '../../domain/ticket.js';

/** A parameter of a statement. */
export type StatementParam = string | number | Date | Buffer | null;

/** One call of TicketRepository.insert, its events serialized around the key and number to come. */
export interface CreateRequest {
  draft: TicketDraft;
  /**
   * Per event: event id, subject, the payload cut before the ticket's key, between key and
   * number, and after the number, created_at, traceparent.
   */
  outbox: StatementParam[][];
}

/**
 * The request for `draft` and the events `eventsFor` derives from it. The events are serialized
 * before the store assigns the key and number, with placeholders in the envelope's `ticket_id`
 * and `ticket_number` that the statement replaces by the real ones, so each payload is byte for
 * byte what JSON.stringify makes of the event with them.
 */
export function createRequest(
  draft: TicketDraft,
  eventsFor: (ticket: Ticket) => TicketEvent[],
): CreateRequest {
  const events = eventsFor({ ...draft, id: PLACEHOLDER, globalId: PLACEHOLDER });
  const outbox = events.map((e): StatementParam[] => {
    const m = toOutboxMessage(e);
    return [
      m.eventId,
      m.subject,
      ...splitAtTicketRefs(m.payload),
      draft.createdAt,
      m.traceparent ?? null,
    ];
  });
  return { draft, outbox };
}

/** The ticket's number is `number`, an SQL expression (a variable plus a constant offset). */
const ticketInsert = (number: string) => `INSERT INTO tickets (org_id, number, content,
  author_name, idempotency_key, status, priority, category, ai_summary, ai_answer, created_at,
  updated_at) VALUES (?, ${number}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/**
 * Takes `n` numbers of each of `orgs` organizations (one statement, whatever their count): each
 * counter row is created at its `n` or raised by it, and stays locked by this transaction until
 * COMMIT (so the numbers are consecutive, and a batch rolled back gives its numbers back). The
 * rows come as a derived table rather than `VALUES(...)`, deprecated in MySQL 8.
 */
const counterAdd = (orgs: number) => `INSERT INTO tickets_org_counters (org_id, last_number)
  SELECT b.org_id, b.n FROM (${Array(orgs).fill('SELECT ? AS org_id, ? AS n').join(' UNION ALL ')}) AS b
  ON DUPLICATE KEY UPDATE last_number = last_number + b.n`;
/** How each request of a batch is answered. */
type Plan =
  | { insert: { orgId: string; offset: number } } // the offset-th new ticket of its org in the batch
  | { sameAs: number } // index of the earlier request of the batch with its key
  | { existing: number }; // the number of the ticket that already held its key

/**
 * Writes `requests` in one transaction on `conn` in one round trip: START TRANSACTION; the
 * counters of the organizations with new tickets raised by their counts (in org id order, so
 * two batches never wait on each other in a cycle) and, per organization, `@nK` = the number
 * before them; per ticket its
 * INSERT with number `@nK + offset` and `SET @tN = LAST_INSERT_ID()`; one INSERT of every
 * outbox row, each payload completed with its ticket's key and number (a ticket's rows in the
 * order of its events, the tickets in the order of the requests); the `@nK` read back; COMMIT.
 * Keys come from each INSERT's own result (never assumed consecutive: MySQL 8 interleaves
 * auto-increment values across concurrent inserts); numbers are consecutive per organization.
 *
 * Idempotency keys: a request whose key an earlier request of the batch holds is answered as
 * that one's duplicate; a key in `taken` (looked up after a failed attempt) as the ticket that
 * holds it. A key taken outside the batch and not in `taken` fails the whole query with
 * ER_DUP_ENTRY: the transaction is rolled back (its numbers with it) and the caller runs the
 * batch again with the batch's keys looked up (`findTakenKeys`).
 */
export async function createInOneTransaction(
  conn: PoolConnection,
  requests: CreateRequest[],
  taken: ReadonlyMap<string, number> = new Map(),
): Promise<InsertOutcome[]> {
  const firstWithKey = new Map<string, number>();
  const newPerOrg = new Map<string, number>();
  const plans = requests.map(({ draft }, index): Plan => {
    const key = keyOf(draft);
    if (key !== undefined) {
      const existing = taken.get(key);
      if (existing !== undefined) return { existing };
      const first = firstWithKey.get(key);
      if (first !== undefined) return { sameAs: first };
      firstWithKey.set(key, index);
    }
    const offset = (newPerOrg.get(draft.orgId) ?? 0) + 1;
    newPerOrg.set(draft.orgId, offset);
    return { insert: { orgId: draft.orgId, offset } };
  });

  const orgs = [...newPerOrg.keys()].sort();
  const orgVar = new Map(orgs.map((orgId, k) => [orgId, `@n${k}`]));
  const statements = ['START TRANSACTION'];
  const params: StatementParam[] = [];
  if (orgs.length > 0) {
    statements.push(
      counterAdd(orgs.length),
      `SET ${orgs
        .map(
          (o) =>
            `${orgVar.get(o)} = (SELECT last_number FROM tickets_org_counters WHERE org_id = ?) - ?`,
        )
        .join(', ')}`,
    );
    const counts = orgs.flatMap((o) => [o, newPerOrg.get(o)!]);
    params.push(...counts, ...counts);
  }
  const outboxRows: string[] = [];
  const outboxParams: StatementParam[] = [];
  const insertedBy: number[] = [];
  plans.forEach((plan, index) => {
    if (!('insert' in plan)) return;
    const { draft, outbox } = requests[index]!;
    const number = `${orgVar.get(plan.insert.orgId)} + ${plan.insert.offset}`;
    insertedBy[index] = statements.length;
    statements.push(ticketInsert(number), `SET @t${index} = LAST_INSERT_ID()`);
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
      outboxRows.push(`(?, ?, CONCAT(?, @t${index}, ?, ${number}, ?), ?, ?)`);
      outboxParams.push(...row);
    }
  });
  if (outboxRows.length > 0) {
    statements.push(
      `INSERT INTO tickets_outbox (event_id, subject, payload, created_at, traceparent)
       VALUES ${outboxRows.join(', ')}`,
    );
    params.push(...outboxParams);
  }

  const keys: number[] = [];
  const numbers: number[] = [];
  if (orgs.length > 0) {
    const basesAt = statements.length;
    statements.push(
      `SELECT ${orgs.map((o, k) => `${orgVar.get(o)} AS n${k}`).join(', ')}`,
      'COMMIT',
    );
    // One result per statement: headers for the writes, rows for the SELECT.
    const [results] = (await conn.query<ResultSetHeader[]>(statements.join(';\n'), params)) as [
      unknown[],
      unknown,
    ];
    const bases =
      Array.isArray(results) && results.length === statements.length
        ? (results[basesAt] as RowDataPacket[] | undefined)?.[0]
        : undefined;
    if (!bases) throw new IncompleteResultsError(statements.length);
    const baseOf = new Map(orgs.map((orgId, k) => [orgId, Number(bases[`n${k}`])]));
    plans.forEach((plan, i) => {
      if (!('insert' in plan)) return;
      keys[i] = Number((results[insertedBy[i]!] as ResultSetHeader).insertId);
      numbers[i] = baseOf.get(plan.insert.orgId)! + plan.insert.offset;
    });
  }
  return plans.map((plan, i): InsertOutcome => {
    if ('insert' in plan)
      return {
        kind: 'created',
        ticket: { ...requests[i]!.draft, id: numbers[i]!, globalId: keys[i]! },
      };
    if ('sameAs' in plan) return { kind: 'duplicate', ticketId: numbers[plan.sameAs]! };
    return { kind: 'duplicate', ticketId: plan.existing };
  });
}

/**
 * The answer to a batch's query lacked results of some of its statements. The network-fault
 * suite met it as the link to MariaDB came back from a +200 ms delay: the driver resolved the
 * query with fewer results than statements. Whether the batch committed is unknown, as after a lost
 * connection: `fatal` makes it one (the connection is dropped, the caller gets a retryable
 * 503, and the idempotency key answers the retry).
 */
export class IncompleteResultsError extends Error {
  readonly code = 'INCOMPLETE_RESULTS';
  readonly fatal = true;
  constructor(expected: number) {
    super(`the batch's query answered with fewer than its ${expected} results`);
    this.name = 'IncompleteResultsError';
  }
}

/**
 * The numbers of the tickets that hold the idempotency keys of `requests`, by keyOf: one SELECT
 * per key (the database's own comparison of org and key, as the unique key applies it), all in
 * one query.
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
  const select = 'SELECT number FROM tickets WHERE org_id = ? AND idempotency_key = ?';
  const [results] = await conn.query<RowDataPacket[] | RowDataPacket[][]>(
    Array(keyed.size).fill(select).join(';\n'),
    [...keyed.values()].flatMap((d) => [d.orgId, d.idempotencyKey]),
  );
  // One statement answers with its rows, several with a list of row sets.
  const rowSets = keyed.size === 1 ? [results as RowDataPacket[]] : (results as RowDataPacket[][]);
  [...keyed.keys()].forEach((key, i) => {
    const row = rowSets[i]![0];
    if (row) taken.set(key, Number(row.number));
  });
  return taken;
}

/** A draft's (org, idempotency key) as one map key; undefined without a key. */
function keyOf(draft: TicketDraft): string | undefined {
  return draft.idempotencyKey === null
    ? undefined
    : JSON.stringify([draft.orgId, draft.idempotencyKey]);
}

/** The key and number events are serialized with before the store assigns them (both start at 1). */
const PLACEHOLDER = 0;
const KEY_FIELD = `"ticket_id":${PLACEHOLDER}`;
const NUMBER_FIELD = `"ticket_number":${PLACEHOLDER}`;

/**
 * An event's JSON cut around the values of its envelope's `ticket_id` and `ticket_number`:
 * [before the key, between key and number, after the number]. JSON.stringify writes the
 * envelope's keys first, in the order the producer wrote them, and escapes every quote inside
 * strings, so the first occurrence of each field is the envelope's own.
 */
export function splitAtTicketRefs(payload: string): [string, string, string] {
  const key = payload.indexOf(KEY_FIELD);
  const number = payload.indexOf(NUMBER_FIELD);
  if (key < 0 || number < key)
    throw new Error('event payload without an envelope ticket_id followed by ticket_number');
  const value = String(PLACEHOLDER).length;
  const keyEnd = key + KEY_FIELD.length;
  const numberEnd = number + NUMBER_FIELD.length;
  return [
    payload.slice(0, keyEnd - value),
    payload.slice(keyEnd, numberEnd - value),
    payload.slice(numberEnd),
  ];
}
