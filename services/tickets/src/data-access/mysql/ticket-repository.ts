import { randomBytes } from 'node:crypto';
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import {
  currentTraceparent,
  isDuplicateKeyError,
  mapMysqlErrors,
  mysqlUnavailable,
  openMysql,
  withTransaction,
  type Logger,
  type Pool,
  type TransactionOptions,
} from '@support-agent/shared';
import type { OutboxMessage, TicketEvent } from '../../domain/events.js';
import type {
  InsertOutcome,
  ListQuery,
  PublishReport,
  RelayBatchResult,
  TicketChange,
  TicketRepository,
  UpdateOutcome,
} from '../../domain/ports.js';
import type { Ticket, TicketDraft, TicketPriority, TicketStatus } from '../../domain/ticket.js';
import {
  createInOneTransaction,
  createRequest,
  findTakenKeys,
  type CreateRequest,
  type StatementParam,
} from './batched-creates.js';
import { updateInOneTransaction, type UpdateRequest } from './batched-updates.js';
import { SharedTransactions, type SharedResult } from './shared-transactions.js';
import { SCHEMA } from './migrations.js';

const TICKET_COLUMNS =
  'id, number, org_id, content, author_name, idempotency_key, status, priority, category, ai_summary, ai_answer, created_at, updated_at';

/**
 * Creates per shared transaction at most (CREATE_BATCH). 100 creates at the content limit make
 * a query of ≈ 3.5 MB (content and event payload each up to 16 KB), well under
 * max_allowed_packet (16 MB on MariaDB, 64 MB on MySQL 8).
 */
export const DEFAULT_CREATE_BATCH = 100;
const CURSOR_SECRET_NAME = 'cursor_hmac';
const PURGE_CHUNK = 1_000;
/**
 * Reports an unreachable database as service_unavailable (retryable, 503 at the
 * gateway) rather than internal_error; anything else passes through unchanged.
 */
export function toStoreError(err: unknown): unknown {
  return mysqlUnavailable(err, 'the tickets database');
}

interface TicketRow extends RowDataPacket {
  id: number | string;
  number: number | string;
  org_id: string;
  content: string;
  author_name: string | null;
  idempotency_key: string | null;
  status: string;
  priority: string;
  category: string | null;
  ai_summary: string | null;
  ai_answer: string | null;
  created_at: Date;
  updated_at: Date;
}

interface OutboxRow extends RowDataPacket {
  id: number | string;
  event_id: string;
  subject: string;
  payload: string;
  traceparent: string | null;
}

/** Tickets in MySQL 8 / MariaDB: the production store. */
export class MysqlTicketRepository implements TicketRepository {
  private secret: Buffer | undefined;
  private readonly updates = new SharedTransactions<UpdateRequest, UpdateOutcome>((requests) =>
    this.transaction(
      (conn) =>
        updateInOneTransaction(conn, requests, TICKET_COLUMNS, (row) => toTicket(row as TicketRow)),
      { inOneQuery: true, retryDuplicates: true },
    ),
  );
  /** Shared transactions for creates; undefined when each create goes on its own. */
  private readonly creates: SharedTransactions<CreateRequest, InsertOutcome> | undefined;

  private constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    createBatch: number,
  ) {
    this.creates =
      createBatch > 1
        ? new SharedTransactions((requests) => this.insertTogether(requests), createBatch)
        : undefined;
  }

  /** Connects (waiting for the server), applies migrations and makes sure the cursor secret exists. */
  static async open(
    url: string,
    logger: Logger,
    options: { poolSize?: number; connectTimeoutMs?: number; createBatch?: number } = {},
  ): Promise<MysqlTicketRepository> {
    const pool = await openMysql(url, logger, {
      schema: SCHEMA,
      poolSize: options.poolSize,
      connectTimeoutMs: options.connectTimeoutMs,
      // For insert()'s one-round-trip transaction and update()'s two. Every statement here is
      // built from constants and placeholders (values are escaped by the driver), never from input.
      pool: { multipleStatements: true },
    });
    try {
      const repo = new MysqlTicketRepository(
        pool,
        logger,
        options.createBatch ?? DEFAULT_CREATE_BATCH,
      );
      await repo.cursorSecret();
      return repo;
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
  }

  /**
   * A new ticket and its events. Creates arriving while earlier ones are being committed wait
   * and go together (batched-creates.ts): one multi-statement query, START TRANSACTION, each
   * ticket with its outbox rows, COMMIT; one socket write and one commit for the batch (a
   * create alone is one round trip, as before). With `createBatch` 1, each create on its own.
   */
  insert(draft: TicketDraft, eventsFor: (ticket: Ticket) => TicketEvent[]): Promise<InsertOutcome> {
    const request = createRequest(draft, eventsFor);
    if (this.creates) return this.creates.submit(request);
    return this.insertTogether([request]).then(([result]) => {
      if ('outcome' in result!) return result.outcome;
      throw result!.error;
    });
  }

  /**
   * Writes a batch of creates in one transaction, again after a deadlock. A key taken outside
   * the batch (another replica, a cache that expired) fails the batch's query with a duplicate
   * key: the next attempt looks the batch's keys up first and answers those as duplicates. If
   * a duplicate still fails it, each create runs on its own, as a lone create does.
   */
  private async insertTogether(requests: CreateRequest[]): Promise<SharedResult<InsertOutcome>[]> {
    let taken: Map<string, number> | undefined;
    let lookUp = false;
    try {
      const outcomes = await this.transaction(
        async (conn) => {
          if (lookUp) taken = await findTakenKeys(conn, requests);
          try {
            return await createInOneTransaction(conn, requests, taken);
          } catch (err) {
            if (isDuplicateKeyError(err)) lookUp = true;
            throw err;
          }
        },
        { inOneQuery: true, retryDuplicates: true },
      );
      return outcomes.map((outcome) => ({ outcome }));
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      if (requests.length === 1) return [await this.settleDuplicate(requests[0]!, err)];
      return (await Promise.all(requests.map((r) => this.insertTogether([r])))).flat();
    }
  }

  /** A lone create that lost its key to another call: theirs wins. */
  private async settleDuplicate(
    request: CreateRequest,
    err: unknown,
  ): Promise<SharedResult<InsertOutcome>> {
    const { orgId, idempotencyKey } = request.draft;
    const existing =
      idempotencyKey === null
        ? undefined
        : await this.findIdByIdempotencyKey(orgId, idempotencyKey);
    return existing === undefined
      ? { error: err }
      : { outcome: { kind: 'duplicate', ticketId: existing } };
  }

  async findIdByIdempotencyKey(orgId: string, key: string): Promise<number | undefined> {
    const rows = await this.execute<RowDataPacket[]>(
      'SELECT number FROM tickets WHERE org_id = ? AND idempotency_key = ?',
      [orgId, key],
    );
    const row = rows[0];
    return row ? Number(row.number) : undefined;
  }

  async get(orgId: string, ticketId: number): Promise<Ticket | undefined> {
    const rows = await this.execute<TicketRow[]>(
      `SELECT ${TICKET_COLUMNS} FROM tickets WHERE org_id = ? AND number = ?`,
      [orgId, ticketId],
    );
    return rows[0] ? toTicket(rows[0]) : undefined;
  }

  async list(query: ListQuery): Promise<Ticket[]> {
    const where = ['org_id = ?'];
    const params: StatementParam[] = [query.orgId];
    const { status, priority, category } = query.filters;
    if (status) {
      where.push('status = ?');
      params.push(status);
    }
    if (priority) {
      where.push('priority = ?');
      params.push(priority);
    }
    if (category) {
      where.push('category = ?');
      params.push(category);
    }
    if (query.after) {
      const at = new Date(query.after.createdAtMs);
      // The redundant `created_at <= ?` gives the optimizer a plain range on the index.
      where.push('created_at <= ? AND (created_at < ? OR (created_at = ? AND number < ?))');
      params.push(at, at, at, query.after.id);
    }
    params.push(query.limit);
    const rows = await this.execute<TicketRow[]>(
      `SELECT ${TICKET_COLUMNS} FROM tickets WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, number DESC LIMIT ?`,
      params,
    );
    return rows.map(toTicket);
  }

  /** Goes into a shared transaction with the updates arriving meanwhile (batched-updates.ts). */
  update(
    orgId: string,
    ticketId: number,
    decide: (current: Ticket) => TicketChange | null,
    options: { onceKey?: string } = {},
  ): Promise<UpdateOutcome> {
    return this.updates.submit({
      orgId,
      ticketId,
      decide,
      onceKey: options.onceKey,
      // The trace of the caller, for its events (the batch runs in another caller's context).
      traceparent: currentTraceparent(),
    });
  }

  async cursorSecret(): Promise<Buffer> {
    if (this.secret) return this.secret;
    // The first replica to get here generates the secret; everyone reads the one stored.
    await this.query<ResultSetHeader>(
      'INSERT IGNORE INTO tickets_secrets (name, secret, created_at) VALUES (?, ?, ?)',
      [CURSOR_SECRET_NAME, randomBytes(32), new Date()],
    );
    const rows = await this.query<RowDataPacket[]>(
      'SELECT secret FROM tickets_secrets WHERE name = ?',
      [CURSOR_SECRET_NAME],
    );
    const secret = rows[0]?.secret as Buffer | undefined;
    if (!secret || secret.length < 32)
      throw new Error('tickets_secrets holds no usable cursor secret');
    this.secret = secret;
    return secret;
  }

  async relayBatch(
    limit: number,
    publish: (messages: OutboxMessage[]) => Promise<PublishReport>,
  ): Promise<RelayBatchResult> {
    // Two round trips: the claim (starting the transaction) and, after the broker's answer, the
    // mark and COMMIT. READ COMMITTED: the locking read takes no gap locks, so ticket inserts
    // (which add outbox rows) never wait behind a relay that is waiting for the broker.
    return this.transaction(
      async (conn): Promise<RelayBatchResult> => {
        const [claimed] = await conn.query<RowDataPacket[][]>(
          `SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
           START TRANSACTION;
           SELECT id, event_id, subject, payload, traceparent FROM tickets_outbox
           WHERE published_at IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
          [limit],
        );
        const rows = claimed[2] as OutboxRow[];
        if (rows.length === 0) {
          await conn.query('COMMIT');
          return { claimed: 0, published: 0 };
        }
        const report = await publish(
          rows.map((r) => ({
            eventId: r.event_id,
            subject: r.subject,
            payload: r.payload,
            traceparent: r.traceparent,
          })),
        );
        const done = new Set(report.published);
        const ids = rows.filter((r) => done.has(r.event_id)).map((r) => r.id);
        if (ids.length > 0) {
          await conn.query('UPDATE tickets_outbox SET published_at = ? WHERE id IN (?); COMMIT', [
            new Date(),
            ids,
          ]);
        } else {
          await conn.query('COMMIT');
        }
        return {
          claimed: rows.length,
          published: ids.length,
          ...(report.error === undefined ? {} : { error: report.error }),
        };
      },
      { inOneQuery: true, retry: false },
    );
  }

  async countUnpublished(): Promise<number> {
    const rows = await this.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM tickets_outbox WHERE published_at IS NULL',
      [],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async purgePublished(cutoff: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const res = await this.query<ResultSetHeader>(
        'DELETE FROM tickets_outbox WHERE published_at < ? ORDER BY published_at LIMIT ?',
        [cutoff, PURGE_CHUNK],
      );
      total += res.affectedRows;
      if (res.affectedRows < PURGE_CHUNK) return total;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async query<T extends RowDataPacket[] | ResultSetHeader>(
    sql: string,
    params: unknown[],
  ): Promise<T> {
    const [result] = await mapMysqlErrors(() => this.pool.query<T>(sql, params), toStoreError);
    return result;
  }

  /**
   * A prepared statement (binary protocol): parsed once per connection and statement text,
   * then only the parameters travel. For the hot, fixed-shape statements.
   */
  private async execute<T extends RowDataPacket[] | ResultSetHeader>(
    sql: string,
    params: StatementParam[],
  ): Promise<T> {
    const [result] = await mapMysqlErrors(() => this.pool.execute<T>(sql, params), toStoreError);
    return result;
  }

  /** Runs `fn` in a transaction, again after a deadlock unless told not to (side effects). */
  private transaction<T>(
    fn: (conn: PoolConnection) => Promise<T>,
    options: Pick<TransactionOptions, 'inOneQuery' | 'retryDuplicates'> & { retry?: boolean } = {},
  ): Promise<T> {
    return withTransaction(this.pool, fn, {
      ...options,
      attempts: options.retry === false ? 1 : 3,
      mapError: toStoreError,
      onRetry: (code, attempt) =>
        this.logger.warn({ code, attempt }, 'transaction conflict; retrying'),
    });
  }
}

function toTicket(row: TicketRow): Ticket {
  return {
    id: Number(row.number),
    globalId: Number(row.id),
    orgId: row.org_id,
    content: row.content,
    authorName: row.author_name,
    idempotencyKey: row.idempotency_key,
    status: row.status as TicketStatus,
    priority: row.priority as TicketPriority,
    category: row.category,
    aiSummary: row.ai_summary,
    aiAnswer: row.ai_answer,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
