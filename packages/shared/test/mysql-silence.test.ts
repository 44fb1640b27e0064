// watchSilence: a query unanswered within the limit fails with MysqlSilentError (a 503 once
// mapped by mysqlUnavailable), its connection is dropped, and the pool goes on working with a
// new connection, for the pool's own queries and for a transaction's connection alike.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import {
  AppError,
  createLogger,
  mysqlUnavailable,
  MysqlSilentError,
  openMysql,
  type Pool,
} from '@support-agent/shared';
import { createTestDatabase } from '../../../test/support/mysql.js';

const logger = createLogger('shared-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const SCHEMA = { table: 'silence_test_migrations', migrations: [] };
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: Pool;

before(async () => {
  db = await createTestDatabase('silence');
  pool = await openMysql(db.url, logger, { schema: SCHEMA, poolSize: 2, queryTimeoutMs: 300 });
});

after(async () => {
  await pool?.end();
  await db?.drop();
});

const threadId = async (p: { query: Pool['query'] }) =>
  Number(
    ((await p.query('SELECT CONNECTION_ID() AS id')) as [{ id: number }[], unknown])[0][0]!.id,
  );

it('when a query goes unanswered past the limit, then it fails as unavailable within the limit and the pool works on', async () => {
  const t0 = Date.now();
  const err = await pool.query('SELECT SLEEP(3)').then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof MysqlSilentError, String(err));
  assert.ok(Date.now() - t0 < 1_500, `failed after ${Date.now() - t0} ms`);
  const mapped = mysqlUnavailable(err, 'the test database');
  assert.ok(mapped instanceof AppError && mapped.code === 'service_unavailable');
  assert.ok((await threadId(pool)) > 0, 'the pool answers again');

  const conn = await pool.getConnection();
  const before = await threadId(conn);
  await assert.rejects(conn.query('SELECT SLEEP(3)'), MysqlSilentError);
  conn.release(); // a destroyed connection is not handed out again
  const fresh = await pool.getConnection();
  try {
    assert.notEqual(await threadId(fresh), before, 'a new connection');
  } finally {
    fresh.release();
  }
});
