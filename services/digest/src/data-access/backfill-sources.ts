import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { connect, DeliverPolicy } from 'nats';
import { createMysqlPool, NATS_CLIENT_OPTIONS } from '@support-agent/shared';
import type { RowDataPacket } from 'mysql2/promise';
import type { TicketAggregate } from '../domain/aggregate.js';
import { weekStartOf } from '../domain/iso-week.js';
import { FILTER_SUBJECT, isNotFound, STREAM_NAME } from './nats-stream.js';

const FETCH_BATCH = 256;
const PAGE = 1_000;

/**
 * Every message of stream TICKETS from sequence 1 up to the last one stored when
 * the replay began, through an ordered (ephemeral, flow-controlled) consumer.
 */
export async function* readTicketStream(url: string): AsyncGenerator<string> {
  const nc = await connect({
    servers: url.split(',').map((s) => s.trim()),
    name: 'digest-backfill',
    ...NATS_CLIENT_OPTIONS,
    timeout: 5_000,
  });
  try {
    const jsm = await nc.jetstreamManager();
    let last: number;
    try {
      const info = await jsm.streams.info(STREAM_NAME);
      if (info.state.messages === 0) return;
      last = info.state.last_seq;
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const consumer = await nc.jetstream().consumers.get(STREAM_NAME, {
      filterSubjects: FILTER_SUBJECT,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 1,
    });
    let seq = 0;
    let idleFetches = 0;
    while (seq < last) {
      const batch = await consumer.fetch({ max_messages: FETCH_BATCH, expires: 2_000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        seq = m.info.streamSequence;
        yield m.string();
        if (seq >= last) break;
      }
      idleFetches = got === 0 ? idleFetches + 1 : 0;
      // Messages up to `last` were deleted (limits): nothing more will come.
      if (idleFetches >= 3) break;
    }
  } finally {
    await nc.close();
  }
}

/** Every line of the embedded event file (DATA_DIR/events/tickets.jsonl). */
export async function* readEventFile(path: string): AsyncGenerator<string> {
  if (!existsSync(path)) return;
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim()) yield line;
  }
}

/**
 * Ticket snapshots from the tickets service's own table, by id (keyset pages).
 * The table has no triage flag: a ticket with an ai_answer counts as answered
 * automatically, an approximation of the event's `answered` (exact counts are unaffected).
 */
export async function* readTicketsTable(url: string): AsyncGenerator<TicketAggregate> {
  const pool = createMysqlPool(url, { connectionLimit: 2 });
  try {
    let after = 0;
    for (;;) {
      const [rows] = await pool.query<RowDataPacket[]>(
        `SELECT id, org_id, content, status, category, ai_summary, ai_answer, created_at, updated_at
           FROM tickets WHERE id > ? ORDER BY id LIMIT ?`,
        [after, PAGE],
      );
      for (const r of rows) {
        const createdAt = r.created_at as Date;
        const updatedAt = r.updated_at as Date;
        const triaged = r.ai_summary !== null || r.category !== null;
        yield {
          orgId: String(r.org_id),
          ticketId: Number(r.id),
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
