import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AppError,
  createLogger,
  isLockConflict,
  mysqlUnavailable,
  openMysql,
  withTransaction,
  type Pool,
} from '@support-agent/shared';
import { createTestDatabase } from '../../../test/support/mysql.js';

const logger = createLogger('shared-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const SCHEMA = {
  table: 'shared_test_schema_migrations',
  migrations: [
    {
      version: 1,
      name: 'two counters',
      statements: [
        'CREATE TABLE counters (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB',
        'INSERT INTO counters (id, n) VALUES (1, 0), (2, 0)',
      ],
    },
  ],
};

describe('MySQL transactions and migrations (packages/shared/src/mysql)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: Pool;

  before(async () => {
    db = await createTestDatabase('shared');
    pool = await openMysql(db.url, logger, { schema: SCHEMA, poolSize: 4 });
  });
  after(async () => {
    await pool.end();
    await db.drop();
  });

  it('when the service starts again, then its applied migrations are not run twice', async () => {
    const again = await openMysql(db.url, logger, { schema: SCHEMA, poolSize: 1 });
    const [rows] = await again.query('SELECT version, name FROM shared_test_schema_migrations');
    await again.end();
    assert.deepEqual(
      (rows as Array<{ version: number; name: string }>).map((r) => ({ ...r })),
      [{ version: 1, name: 'two counters' }],
    );
  });

  it('when two transactions deadlock, then the loser runs again and both increments land', async () => {
    const runs: number[] = [];
    let bothLocked: () => void = () => undefined;
    const firstLocks = new Promise<void>((resolve) => (bothLocked = resolve));
    let locked = 0;
    const bump = (first: number, second: number) =>
      withTransaction(
        pool,
        async (conn) => {
          runs.push(first);
          await conn.query('UPDATE counters SET n = n + 1 WHERE id = ?', [first]);
          if (++locked === 2) bothLocked();
          await firstLocks;
          await conn.query('UPDATE counters SET n = n + 1 WHERE id = ?', [second]);
        },
        { attempts: 3 },
      );
    await Promise.all([bump(1, 2), bump(2, 1)]);
    const [rows] = await pool.query('SELECT id, n FROM counters ORDER BY id');
    assert.deepEqual(
      (rows as Array<{ id: number; n: number }>).map((r) => r.n),
      [2, 2],
    );
    assert.equal(runs.length, 3, 'one of the two ran twice');
  });

  it('when the body fails with another error, then nothing is written and the error is passed on', async () => {
    await assert.rejects(
      withTransaction(pool, async (conn) => {
        await conn.query('UPDATE counters SET n = 100 WHERE id = 1');
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    const [rows] = await pool.query('SELECT n FROM counters WHERE id = 1');
    assert.notEqual((rows as Array<{ n: number }>)[0]!.n, 100);
  });
});

describe('MySQL error classification', () => {
  it('when an error is a deadlock or lock wait timeout (by code or errno), then it is a lock conflict', () => {
    for (const e of [
      { code: 'ER_LOCK_DEADLOCK' },
      { code: 'ER_LOCK_WAIT_TIMEOUT' },
      { errno: 1213 },
      { errno: 1205 },
    ])
      assert.ok(isLockConflict(Object.assign(new Error('x'), e)), JSON.stringify(e));
    assert.ok(!isLockConflict(Object.assign(new Error('x'), { code: 'ER_DUP_ENTRY' })));
  });

  it('when the database is unreachable, then the error becomes service_unavailable naming the store', () => {
    const mapped = mysqlUnavailable(
      Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
      'the test database',
    );
    assert.ok(mapped instanceof AppError);
    assert.equal(mapped.code, 'service_unavailable');
    assert.equal(mapped.message, 'the test database is unavailable');
    const dup = Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY' });
    assert.equal(mysqlUnavailable(dup, 'the test database'), dup);
  });
});
