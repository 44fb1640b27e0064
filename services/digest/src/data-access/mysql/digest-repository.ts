import { openMysql, redactUrl, type Logger, type Pool } from '@support-agent/shared';
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import type { TicketAggregate } from '../../domain/aggregate.js';
import type { TicketEvent } from '../../domain/events.js';
import { parseSummary } from '../../domain/digest-summary.js';
import type {
  ApplyOutcome,
  DigestRepository,
  RunState,
  StoredDigest,
  WeekCount,
  WeekTicket,
} from '../../domain/ports.js';
import { applyEvents, TICKET_COLUMNS, ticketRow, toAggregate } from './apply-events.js';
import { SCHEMA } from './migrations.js';
import { MysqlScheduleStore } from './schedule-store.js';
import { guarded, inTransaction } from './transactions.js';

export interface MysqlRepositoryOptions {
  poolSize?: number;
  /** How long start-up waits for MySQL to answer. */
  waitMs?: number;
}

const DIGEST_COLUMNS = 'org_id, week_start, week_end, ticket_count, content, generated_at, summary';
const DIGEST_COLUMNS_WITHOUT_SUMMARY = DIGEST_COLUMNS.replace(', summary', ', NULL AS summary');

/**
 * Aggregates, digests and the schedule's lease/run records in MySQL. Events are
 * applied in batches (apply-events.ts), each in one transaction that records every
 * event id in `digest_processed_events`: a redelivered or replayed event is found
 * there and changes nothing, so counts never double.
 */
export class MysqlDigestRepository implements DigestRepository {
  private readonly schedule: MysqlScheduleStore;

  private constructor(readonly pool: Pool) {
    this.schedule = new MysqlScheduleStore(pool);
  }

  static async open(
    url: string,
    logger: Logger,
    options: MysqlRepositoryOptions = {},
  ): Promise<MysqlDigestRepository> {
    const pool = await openMysql(url, logger, {
      schema: SCHEMA,
      poolSize: options.poolSize ?? 10,
      connectTimeoutMs: options.waitMs,
      // A digest build reads a whole week of tickets: more time than a request's query.
      queryTimeoutMs: 30_000,
      // DATE columns are ISO week names here: keep them as 'YYYY-MM-DD' strings. Multiple
      // statements for applyEvents' two round trips; every statement here is built from
      // constants and placeholders (values are escaped by the driver), never from input.
      pool: { dateStrings: ['DATE'], multipleStatements: true },
    });
    logger.info({ mysql: redactUrl(url) }, 'digest store: MySQL');
    return new MysqlDigestRepository(pool);
  }

  async applyEvent(event: TicketEvent): Promise<ApplyOutcome> {
    return (await applyEvents(this.pool, [event]))[0]!;
  }

  applyEvents(events: TicketEvent[]): Promise<ApplyOutcome[]> {
    return applyEvents(this.pool, events);
  }

  applySnapshot(ticket: TicketAggregate): Promise<boolean> {
    return inTransaction(
      this.pool,
      async (conn) => {
        const current = await this.lockTicket(conn, ticket.orgId, ticket.ticketId);
        const counted =
          ticket.weekStart !== null && (current === undefined || current.createdAt === null);
        await this.writeTicket(conn, ticket, current !== undefined);
        if (counted) await this.countTicket(conn, ticket.orgId, ticket.weekStart!);
        return counted;
      },
      { retryDuplicates: true },
    );
  }

  resetAggregates(options: { forgetProcessedEvents: boolean }): Promise<void> {
    // DELETE in one transaction rather than TRUNCATE (DDL, not transactional): a live consumer
    // applying an event meanwhile is either fully before or fully after the reset.
    return inTransaction(this.pool, async (conn) => {
      await conn.query('DELETE FROM digest_tickets');
      await conn.query('DELETE FROM digest_weeks');
      if (options.forgetProcessedEvents) await conn.query('DELETE FROM digest_processed_events');
    });
  }

  async weekTickets(orgId: string, weekStart: string, limit: number): Promise<WeekTicket[]> {
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>(
        `SELECT ticket_id, content, created_at, category, status, answered, ai_summary, ai_answer
           FROM digest_tickets
          WHERE org_id = ? AND week_start = ?
          ORDER BY created_at, ticket_id
          LIMIT ?`,
        [orgId, weekStart, limit],
      ),
    );
    return rows.map((r) => ({
      ticketId: Number(r.ticket_id),
      content: String(r.content ?? ''),
      createdAt: r.created_at as Date,
      category: (r.category as string | null) ?? null,
      status: (r.status as string | null) ?? null,
      answered: Number(r.answered) === 1,
      aiSummary: (r.ai_summary as string | null) ?? null,
      aiAnswer: (r.ai_answer as string | null) ?? null,
    }));
  }

  async weekTicketCount(orgId: string, weekStart: string): Promise<number> {
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>(
        'SELECT ticket_count FROM digest_weeks WHERE org_id = ? AND week_start = ?',
        [orgId, weekStart],
      ),
    );
    return Number(rows[0]?.ticket_count ?? 0);
  }

  async orgsWithTickets(weekStart: string): Promise<string[]> {
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>(
        'SELECT org_id FROM digest_weeks WHERE week_start = ? AND ticket_count > 0 ORDER BY org_id',
        [weekStart],
      ),
    );
    return rows.map((r) => String(r.org_id));
  }

  async weekCounts(): Promise<WeekCount[]> {
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>(
        'SELECT org_id, week_start, ticket_count FROM digest_weeks ORDER BY org_id, week_start',
      ),
    );
    return rows.map((r) => ({
      orgId: String(r.org_id),
      weekStart: String(r.week_start),
      ticketCount: Number(r.ticket_count),
    }));
  }

  async saveDigest(d: StoredDigest): Promise<void> {
    const summary = d.summary ? JSON.stringify(d.summary) : null;
    await guarded(() =>
      this.pool.query(
        `INSERT INTO digests (org_id, week_start, week_end, ticket_count, content, generated_at, summary)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON DUPLICATE KEY UPDATE week_end = ?, ticket_count = ?, content = ?, generated_at = ?, summary = ?`,
        [
          d.orgId,
          d.weekStart,
          d.weekEnd,
          d.ticketCount,
          d.content,
          d.generatedAt,
          summary,
          d.weekEnd,
          d.ticketCount,
          d.content,
          d.generatedAt,
          summary,
        ],
      ),
    );
  }

  async latestDigest(orgId: string, withSummary = true): Promise<StoredDigest | undefined> {
    const columns = withSummary ? DIGEST_COLUMNS : DIGEST_COLUMNS_WITHOUT_SUMMARY;
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>(
        `SELECT ${columns} FROM digests WHERE org_id = ? ORDER BY week_start DESC LIMIT 1`,
        [orgId],
      ),
    );
    return rows[0] ? toDigest(rows[0]) : undefined;
  }

  async digestOf(orgId: string, weekStart: string): Promise<StoredDigest | undefined> {
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>(
        `SELECT ${DIGEST_COLUMNS} FROM digests WHERE org_id = ? AND week_start = ?`,
        [orgId, weekStart],
      ),
    );
    return rows[0] ? toDigest(rows[0]) : undefined;
  }

  tryAcquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.schedule.tryAcquireLease(name, holder, ttlMs);
  }
  releaseLease(name: string, holder: string): Promise<void> {
    return this.schedule.releaseLease(name, holder);
  }
  clock(): Promise<Date> {
    return this.schedule.clock();
  }
  runState(weekStart: string): Promise<RunState> {
    return this.schedule.runState(weekStart);
  }
  claimRun(weekStart: string, holder: string, staleMs: number): Promise<boolean> {
    return this.schedule.claimRun(weekStart, holder, staleMs);
  }
  heartbeatRun(weekStart: string, holder: string): Promise<void> {
    return this.schedule.heartbeatRun(weekStart, holder);
  }
  finishRun(weekStart: string, holder: string, orgsBuilt: number): Promise<void> {
    return this.schedule.finishRun(weekStart, holder, orgsBuilt);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async lockTicket(
    conn: PoolConnection,
    orgId: string,
    ticketId: number,
  ): Promise<TicketAggregate | undefined> {
    const [rows] = await conn.query<RowDataPacket[]>(
      `SELECT ${TICKET_COLUMNS} FROM digest_tickets WHERE org_id = ? AND ticket_id = ? FOR UPDATE`,
      [orgId, ticketId],
    );
    return rows[0] ? toAggregate(rows[0]) : undefined;
  }

  private async writeTicket(
    conn: PoolConnection,
    t: TicketAggregate,
    exists: boolean,
  ): Promise<void> {
    const values = ticketRow(t).slice(2); // all but the key
    if (exists) {
      await conn.query(
        `UPDATE digest_tickets
            SET week_start = ?, created_at = ?, content = ?, category = ?, status = ?, status_at = ?,
                triaged_at = ?, answered = ?, ai_summary = ?, ai_answer = ?
          WHERE org_id = ? AND ticket_id = ?`,
        [...values, t.orgId, t.ticketId],
      );
    } else {
      await conn.query(
        `INSERT INTO digest_tickets (${TICKET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [t.orgId, t.ticketId, ...values],
      );
    }
  }

  private async countTicket(conn: PoolConnection, orgId: string, weekStart: string): Promise<void> {
    await conn.query(
      `INSERT INTO digest_weeks (org_id, week_start, ticket_count) VALUES (?, ?, 1)
       ON DUPLICATE KEY UPDATE ticket_count = ticket_count + 1`,
      [orgId, weekStart],
    );
  }
}

function toDigest(r: RowDataPacket): StoredDigest {
  return {
    orgId: String(r.org_id),
    weekStart: String(r.week_start),
    weekEnd: String(r.week_end),
    ticketCount: Number(r.ticket_count),
    content: String(r.content),
    generatedAt: r.generated_at as Date,
    summary: parseSummary(r.summary as string | null),
  };
}
