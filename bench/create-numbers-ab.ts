// A/B of the tickets store's create path: what numbering tickets per organization costs. Two
// MySQL ticket repositories in this process, each on a database of its own on one MariaDB,
// loaded AT THE SAME TIME by closed loops of creates with a fresh idempotency key (the store
// part of a create: its shared transactions, no gateway, gRPC or Redis), so the shared
// machine's load falls on both alike. Two pairs a round:
//   other vs this   one organization each: the other build (one id counter) against this one
//                   (one counter row per organization, taken by every create's transaction)
//   1 org vs 32     this build with every create in one organization against creates spread
//                   over 32 (no two of a batch's organizations wait for each other's counter)
// Prints creates/s, latency and shared transactions per pair, and InnoDB's row-lock waits
// over each pair (both sides together).
//   npx tsx bench/create-numbers-ab.ts <other build's repository root> [seconds=8] [rounds=3]
//   CONCURRENCY: creates in flight per side (32, as the gateway's connections in create-path.ts)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { createLogger } from '@support-agent/shared';
import { ensureBackendPackages, startMariaDb } from '../test/support/backends.js';
import { otherBuildArgs } from './lib/other-gateway.js';

const { other, seconds, rounds } = otherBuildArgs('create-numbers-ab.ts', 3);
const concurrency = Number(process.env.CONCURRENCY ?? 32);
const logger = createLogger('create-numbers-ab', 'warn');

/** The parts of a tickets build a create needs, loaded from its dist/. */
interface Build {
  open(url: string): Promise<{ insert: Insert; close(): Promise<void> }>;
  draft(orgId: string, content: string, key: string): unknown;
  created: (ticket: unknown) => unknown[];
}
type Insert = (draft: never, eventsFor: never) => Promise<{ kind: string }>;

async function loadBuild(root: string): Promise<Build> {
  const dist = (p: string) =>
    import(pathToFileURL(resolve(root, 'services/tickets/dist', p)).href) as Promise<
      Record<string, any>
    >;
  const [repository, ticket, events] = await Promise.all([
    dist('data-access/mysql/ticket-repository.js'),
    dist('domain/ticket.js'),
    dist('domain/events.js'),
  ]);
  return {
    open: (url) => repository.MysqlTicketRepository.open(url, logger),
    draft: (orgId, content, key) =>
      ticket.openedTicket({ orgId, content, authorName: null, idempotencyKey: key }, new Date()),
    created: (t) => [events.ticketCreated(t)],
  };
}

interface Side {
  name: string;
  build: Build;
  orgs: number;
}

interface Result {
  creates: number;
  latencies: number[];
}

/** Closed loops of creates until `deadline`, `concurrency` in flight. */
async function load(repo: { insert: Insert }, side: Side, deadline: number): Promise<Result> {
  const result: Result = { creates: 0, latencies: [] };
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const i = n++;
        const draft = side.build.draft(
          `bench-${i % side.orgs}`,
          'My export to CSV fails with a timeout after 30 seconds.',
          randomUUID(),
        );
        const t0 = performance.now();
        const outcome = await repo.insert(draft as never, side.build.created as never);
        if (outcome.kind !== 'created') throw new Error(`create ${i}: ${outcome.kind}`);
        result.latencies.push(performance.now() - t0);
        result.creates++;
      }
    }),
  );
  return result;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

async function rowLocks(conn: mysql.Connection): Promise<{ waits: number; ms: number }> {
  const [rows] = await conn.query<mysql.RowDataPacket[]>(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time')",
  );
  const value = (name: string) => Number(rows.find((r) => r.Variable_name === name)?.Value ?? 0);
  return { waits: value('Innodb_row_lock_waits'), ms: value('Innodb_row_lock_time') };
}

async function commits(conn: mysql.Connection): Promise<number> {
  const [rows] = await conn.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Com_commit'");
  return Number(rows[0]?.Value ?? 0);
}

await ensureBackendPackages();
const dir = mkdtempSync(join(tmpdir(), 'create-numbers-ab-'));
const mariadb = await startMariaDb(join(dir, 'mysql'));
const admin = await mysql.createConnection({ uri: mariadb.url });
try {
  const [otherBuild, thisBuild] = await Promise.all([loadBuild(other), loadBuild('.')]);
  const pairs: Array<[Side, Side]> = [
    [
      { name: 'other build, 1 org', build: otherBuild, orgs: 1 },
      { name: 'this build, 1 org', build: thisBuild, orgs: 1 },
    ],
    [
      { name: 'this build, 1 org', build: thisBuild, orgs: 1 },
      { name: 'this build, 32 orgs', build: thisBuild, orgs: 32 },
    ],
  ];
  console.log(`${seconds}s per pair, ${concurrency} creates in flight per side, ${rounds} rounds`);
  let db = 0;
  for (let round = 1; round <= rounds; round++) {
    for (const pair of pairs) {
      const repos = await Promise.all(
        pair.map(async (side) => {
          const name = `numbers_ab_${db++}`;
          await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`);
          const url = new URL(mariadb.url);
          url.pathname = `/${name}`;
          return side.build.open(url.toString());
        }),
      );
      // A second of warm-up (connections, prepared statements), then the measured run.
      await Promise.all(repos.map((repo, i) => load(repo, pair[i]!, Date.now() + 1_000)));
      const [locks0, commits0] = [await rowLocks(admin), await commits(admin)];
      const results = await Promise.all(
        repos.map((repo, i) => load(repo, pair[i]!, Date.now() + seconds * 1_000)),
      );
      const [locks1, commits1] = [await rowLocks(admin), await commits(admin)];
      await Promise.all(repos.map((repo) => repo.close()));
      const total = results.reduce((s, r) => s + r.creates, 0);
      console.log(
        `round ${round}: row-lock waits ${locks1.waits - locks0.waits} (${locks1.ms - locks0.ms} ms), ` +
          `${(total / (commits1 - commits0)).toFixed(1)} creates per commit; load ${loadavg()[0]!.toFixed(1)}`,
      );
      pair.forEach((side, i) => {
        const r = results[i]!;
        const sorted = r.latencies.sort((a, b) => a - b);
        console.log(
          `  ${side.name.padEnd(22)} ${String(Math.round(r.creates / seconds)).padStart(6)} creates/s` +
            `  p50 ${percentile(sorted, 0.5).toFixed(1)} ms  p99 ${percentile(sorted, 0.99).toFixed(1)} ms`,
        );
      });
    }
  }
} finally {
  await admin.end();
  await mariadb.stop();
  rmSync(dir, { recursive: true, force: true });
}
