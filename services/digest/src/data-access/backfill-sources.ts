import { createMysqlPool } from '@support-agent/shared';
import type { RowDataPacket } from 'mysql2/promise';
import type { TicketAggregate } from '../domain/aggregate.js';
import { weekStartOf } from '../domain/iso-week.js';

const PAGE = 1_000;

/**
 * Ticket snapshots from the tickets service's own table, by its key (keyset pages), each known
 * by its number in its organization (the tickets schema from version 3 on).
 * The table has no triage flag: a ticket with an ai_answer counts as answered
 * automatically, an approximation of the event's `answered` (exact counts are unaffected).
 */
export async function* readTicketsTable(url: string): AsyncGenerator<TicketAggregate> {
  const pool = createMysqlPool(url, { connectionLimit: 2 });
  try {
    let after = 0;
    for (;;) {
      const [rows] = await pool.query<RowDataPacket[]>(
        `SELECT id, number, org_id, content, status, category, ai_summary, ai_answer, created_at, updated_at
           FROM tickets WHERE id > ? ORDER BY id LIMIT ?`,
        [after, PAGE],
      );
      for (const r of rows) {
        const createdAt = r.created_at as Date;
        const updatedAt = r.updated_at as Date;
        const triaged = r.ai_summary !== null || r.category !== null;
        yield {
          orgId: String(r.org_id),
          ticketId: Number(r.number),
          weekStart: weekStartOf(createdAt),
          createdAt,
          content: String(r.content),
          category: (r.category as string | null) ?? null,
          status: String(r.status),
          statusAt: updatedAt,
          triagedAt: triaged ? updatedAt : null,
          answered: r.ai_answer !== null,
          aiSummary: (r.ai_summary as string | null) ?? null,
          aiAnswer: (r.ai_answer as string | null) ?? null,
        };
      }
      if (rows.length < PAGE) return;
      after = Number(rows[rows.length - 1]!.id);
    }
  } finally {
    await pool.end();
  }
}
