import { isDuplicateKeyError, type Pool } from '@support-agent/shared';
import type { RowDataPacket } from 'mysql2/promise';
import type { RunState, ScheduleStore } from '../../domain/ports.js';
import { guarded, inTransaction } from './transactions.js';

/**
 * The weekly run's coordination in MySQL. Every time comparison uses the
 * database clock (NOW(3)), so replicas with skewed clocks still agree.
 *
 * - `digest_leases`: one row per lease; taken when missing, expired, or already ours.
 * - `digest_runs`: one row per week, claimed by check-and-mark in a transaction, so a
 *   week runs once even when a lease expires mid-run and another replica takes over.
 *   An unfinished run whose heartbeat went stale (the runner crashed) may be claimed again.
 */
export class MysqlScheduleStore implements ScheduleStore {
  constructor(private readonly pool: Pool) {}

  /** The database's clock (as UNIX milliseconds: no time zone conversion on the way). */
  async clock(): Promise<Date> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS ms',
    );
    return new Date(Number(rows[0]!.ms));
  }

  tryAcquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return inTransaction(this.pool, async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>(
        'SELECT holder, expires_at > NOW(3) AS live FROM digest_leases WHERE name = ? FOR UPDATE',
        [name],
      );
      const row = rows[0];
      if (!row) {
        try {
          await conn.query(
            'INSERT INTO digest_leases (name, holder, expires_at) VALUES (?, ?, DATE_ADD(NOW(3), INTERVAL ? MICROSECOND))',
            [name, holder, ttlMs * 1000],
          );
          return true;
        } catch (err) {
          if (isDuplicateKeyError(err)) return false; // another replica, same instant
          throw err;
        }
      }
      if (Number(row.live) === 1 && row.holder !== holder) return false;
      await conn.query(
        'UPDATE digest_leases SET holder = ?, expires_at = DATE_ADD(NOW(3), INTERVAL ? MICROSECOND) WHERE name = ?',
        [holder, ttlMs * 1000, name],
      );
      return true;
    });
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await guarded(() =>
      this.pool.query(
        'UPDATE digest_leases SET expires_at = NOW(3) WHERE name = ? AND holder = ?',
        [name, holder],
      ),
    );
  }

  async runState(weekStart: string): Promise<RunState> {
    const [rows] = await guarded(() =>
      this.pool.query<RowDataPacket[]>('SELECT finished_at FROM digest_runs WHERE week_start = ?', [
        weekStart,
      ]),
    );
    const row = rows[0];
    if (!row) return 'none';
    return row.finished_at === null ? 'running' : 'finished';
  }

  claimRun(weekStart: string, holder: string, staleMs: number): Promise<boolean> {
    return inTransaction(this.pool, async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>(
        `SELECT finished_at, heartbeat_at < DATE_SUB(NOW(3), INTERVAL ? MICROSECOND) AS stale
           FROM digest_runs WHERE week_start = ? FOR UPDATE`,
        [staleMs * 1000, weekStart],
      );
      const row = rows[0];
      if (!row) {
        try {
          await conn.query(
            `INSERT INTO digest_runs (week_start, holder, started_at, heartbeat_at) VALUES (?, ?, NOW(3), NOW(3))`,
            [weekStart, holder],
          );
          return true;
        } catch (err) {
          if (isDuplicateKeyError(err)) return false;
          throw err;
        }
      }
      if (row.finished_at !== null || Number(row.stale) !== 1) return false;
      await conn.query(
        'UPDATE digest_runs SET holder = ?, heartbeat_at = NOW(3), attempts = attempts + 1 WHERE week_start = ?',
        [holder, weekStart],
      );
      return true;
    });
  }

  async heartbeatRun(weekStart: string, holder: string): Promise<void> {
    await guarded(() =>
      this.pool.query(
        'UPDATE digest_runs SET heartbeat_at = NOW(3) WHERE week_start = ? AND holder = ? AND finished_at IS NULL',
        [weekStart, holder],
      ),
    );
  }

  async finishRun(weekStart: string, holder: string, orgsBuilt: number): Promise<void> {
    await guarded(() =>
      this.pool.query(
        'UPDATE digest_runs SET finished_at = NOW(3), orgs_built = ? WHERE week_start = ? AND holder = ? AND finished_at IS NULL',
        [orgsBuilt, weekStart, holder],
      ),
    );
  }
}
