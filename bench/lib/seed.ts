// Data seeding for the data-scale benchmarks: tickets and digest aggregates written straight
// into MariaDB with multi-row INSERTs (far faster than the API, and the API path is what the
// throughput runs measure anyway).
import mysql from 'mysql2/promise';
import type { Stack } from '../../test/support/stack.js';
import { queryFor, random, entry } from '../synthetic-kb.js';

const BATCH = 5_000;

/**
 * The moderate-load experiments' data (tail-path.ts, heap-retainers.ts): 1,000 KB entries
 * through the admin API and 1,000 tickets for the org `bench`; returns 500 search queries
 * drawn from the entries.
 */
export async function seedBenchOrg(stack: Stack, mysqlUrl: string): Promise<string[]> {
  const entries = Array.from({ length: 1000 }, (_, i) => entry(i));
  await stack.admin('POST', '/admin/v1/orgs/bench/kb/entries', entries);
  await seedTickets(mysqlUrl, 'bench', 1000);
  return Array.from({ length: 500 }, () =>
    queryFor(entries[Math.floor(random() * entries.length)]!.question),
  );
}

/**
 * Inserts `rows` tickets for one org, 10 ms apart, oldest first, statuses rotating; numbered
 * after the org's tickets so far, its counter raised to match (as the service would leave it).
 */
export async function seedTickets(url: string, orgId: string, rows: number): Promise<void> {
  const conn = await mysql.createConnection({ uri: url });
  const start = Date.now() - rows * 10;
  try {
    const [counter] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT last_number FROM tickets_org_counters WHERE org_id = ?',
      [orgId],
    );
    const first = Number(counter[0]?.last_number ?? 0) + 1;
    for (let done = 0; done < rows; done += BATCH) {
      const n = Math.min(BATCH, rows - done);
      const values: unknown[] = [];
      const placeholders: string[] = [];
      for (let i = 0; i < n; i++) {
        const at = new Date(start + (done + i) * 10);
        const status = ['open', 'in_progress', 'resolved', 'closed'][(done + i) % 4];
        placeholders.push('(?, ?, ?, ?, ?, ?, ?, ?)');
        values.push(
          orgId,
          first + done + i,
          `seeded ticket ${done + i}`,
          status,
          'medium',
          at,
          at,
          null,
        );
      }
      await conn.query(
        `INSERT INTO tickets (org_id, number, content, status, priority, created_at, updated_at, idempotency_key) VALUES ${placeholders.join(',')}`,
        values,
      );
    }
    await conn.query(
      `INSERT INTO tickets_org_counters (org_id, last_number) VALUES (?, ?)
       ON DUPLICATE KEY UPDATE last_number = ?`,
      [orgId, first + rows - 1, first + rows - 1],
    );
  } finally {
    await conn.end();
  }
}

/**
 * Topic-structured ticket texts: `topics` template questions (synthetic words, see
 * synthetic-kb.ts) and tickets that paraphrase one of them, Zipf-like topic sizes. Support
 * tickets cluster like this, which is what the digest's topic grouping is built for.
 */
export function ticketTexts(count: number, topics = 200): string[] {
  const templates = Array.from({ length: topics }, (_, i) => entry(1_000_000 + i).question);
  return Array.from({ length: count }, () => {
    const t = Math.min(topics - 1, Math.floor(topics * random() ** 2));
    return queryFor(templates[t]!);
  });
}

/**
 * Writes a week of `rows` tickets into the digest's aggregates (`digest_tickets`, one
 * `digest_weeks` row), as its event consumer would have after `rows` tickets.created events.
 */
export async function seedDigestWeek(
  url: string,
  orgId: string,
  weekStart: string,
  rows: number,
): Promise<void> {
  const conn = await mysql.createConnection({ uri: url });
  const monday = Date.parse(`${weekStart}T00:00:00Z`);
  const step = Math.max(1, Math.floor((7 * 24 * 3600 * 1000 - 1) / Math.max(1, rows)));
  const texts = ticketTexts(Math.min(rows, 20_000));
  try {
    for (let done = 0; done < rows; done += BATCH) {
      const n = Math.min(BATCH, rows - done);
      const values: unknown[] = [];
      const placeholders: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = done + i + 1;
        const at = new Date(monday + (id - 1) * step);
        placeholders.push('(?, ?, ?, ?, ?, ?, ?, ?, ?)');
        values.push(orgId, id, weekStart, at, texts[id % texts.length], 'how_to', 'open', at, 0);
      }
      await conn.query(
        `INSERT INTO digest_tickets (org_id, ticket_id, week_start, created_at, content, category, status, status_at, answered) VALUES ${placeholders.join(',')}`,
        values,
      );
    }
    await conn.query(
      'INSERT INTO digest_weeks (org_id, week_start, ticket_count) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE ticket_count = VALUES(ticket_count)',
      [orgId, weekStart, rows],
    );
  } finally {
    await conn.end();
  }
}

/** The Monday (YYYY-MM-DD) of the ISO week of `at`, UTC. */
export function mondayOf(at: Date): string {
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  return new Date(midnight - ((at.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
}
