import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import {
  mysqlUnavailable,
  openMysql,
  withTransaction,
  type Logger,
  type Pool,
} from '@support-agent/shared';
import { monthOf } from '../domain/month.js';
import type {
  CommitOutcome,
  DeflectionLedger,
  OrgPolicy,
  PolicyStore,
  ReserveOutcome,
  ReserveRequest,
} from '../domain/ports.js';
import { SCHEMA } from './migrations.js';

/** Runs of one transaction after deadlocks or two first reservations of one request id racing. */
const MAX_ATTEMPTS = 8;
const SWEEP_BATCH = 200;
const PURGE_CHUNK = 1_000;

type ReservationState = 'reserved' | 'committed' | 'released';

interface ReservationRow extends RowDataPacket {
  org_id: string;
  month: string;
  state: ReservationState;
}

interface MonthRow extends RowDataPacket {
  used: number;
  reserved: number;
}

/**
 * The deflection ledger and org policies in MySQL 8 / MariaDB.
 *
 * Every operation is one READ COMMITTED transaction that locks the request's
 * reservation row first and then the (org, month) counter row, always in that
 * order, so concurrent reservations of one org queue on the counter row and the
 * check `used + reserved < limit` is exact. READ COMMITTED avoids the gap locks
 * that make concurrent first inserts deadlock; the rare deadlock left is retried.
 */
export class MysqlLedger implements DeflectionLedger, PolicyStore {
  private constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  /** Connects (waiting for the server) and applies migrations. */
  static async open(
    url: string,
    logger: Logger,
    options: { poolSize?: number; connectTimeoutMs?: number } = {},
  ): Promise<MysqlLedger> {
    const pool = await openMysql(url, logger, { schema: SCHEMA, ...options });
    return new MysqlLedger(pool, logger);
  }

  reserve(req: ReserveRequest): Promise<ReserveOutcome> {
    const expiresAt = new Date(req.now.getTime() + req.ttlMs);
    return this.transaction(async (conn) => {
      const existing = await lockReservation(conn, req.requestId);
      if (existing?.state === 'committed')
        return { kind: 'already_committed', month: existing.month };
      if (existing?.state === 'reserved') {
        // The same request again (a redelivery while the first try is still running): same slot, later expiry.
        await conn.query(
          'UPDATE answers_deflection_reservations SET expires_at = GREATEST(expires_at, ?), updated_at = ? WHERE request_id = ?',
          [expiresAt, req.now, req.requestId],
        );
        return { kind: 'reserved', month: existing.month };
      }
      const month = await monthFor(conn, req.orgId, req.now);
      const counter = await lockMonth(conn, req.orgId, month, req.now);
      if (counter.used + counter.reserved >= req.limit) return { kind: 'limit_reached', month };
      await conn.query(
        'UPDATE answers_deflection_months SET reserved = reserved + 1, updated_at = ? WHERE org_id = ? AND month = ?',
        [req.now, req.orgId, month],
      );
      if (existing) {
        await conn.query(
          `UPDATE answers_deflection_reservations
              SET org_id = ?, month = ?, state = 'reserved', expires_at = ?, updated_at = ?
            WHERE request_id = ?`,
          [req.orgId, month, expiresAt, req.now, req.requestId],
        );
      } else {
        await conn.query(
          `INSERT INTO answers_deflection_reservations
             (request_id, org_id, month, state, expires_at, created_at, updated_at)
           VALUES (?, ?, ?, 'reserved', ?, ?, ?)`,
          [req.requestId, req.orgId, month, expiresAt, req.now, req.now],
        );
      }
      return { kind: 'reserved', month };
    });
  }

  commit(requestId: string, limit: number, now: Date): Promise<CommitOutcome> {
    return this.transaction(async (conn) => {
      const r = await lockReservation(conn, requestId);
      if (!r) throw new Error(`no deflection reservation for request ${requestId}`);
      if (r.state === 'committed') return 'already_committed';
      if (r.state === 'reserved') {
        await conn.query(
          `UPDATE answers_deflection_months
              SET used = used + 1, reserved = GREATEST(reserved, 1) - 1, updated_at = ?
            WHERE org_id = ? AND month = ?`,
          [now, r.org_id, r.month],
        );
      } else {
        // Expired and released by the sweeper while generating: take a slot again if one is free.
        const month = await monthFor(conn, r.org_id, now);
        const counter = await lockMonth(conn, r.org_id, month, now);
        if (counter.used + counter.reserved >= limit) return 'limit_reached';
        await conn.query(
          'UPDATE answers_deflection_months SET used = used + 1, updated_at = ? WHERE org_id = ? AND month = ?',
          [now, r.org_id, month],
        );
        await conn.query(
          'UPDATE answers_deflection_reservations SET month = ? WHERE request_id = ?',
          [month, requestId],
        );
      }
      await conn.query(
        "UPDATE answers_deflection_reservations SET state = 'committed', updated_at = ? WHERE request_id = ?",
        [now, requestId],
      );
      return 'committed';
    });
  }

  async release(requestId: string): Promise<void> {
    await this.transaction((conn) => releaseLocked(conn, requestId, new Date(), undefined));
  }

  async releaseExpired(now: Date): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT request_id FROM answers_deflection_reservations
        WHERE state = 'reserved' AND expires_at < ? ORDER BY expires_at LIMIT ${SWEEP_BATCH}`,
      [now],
    );
    let released = 0;
    for (const row of rows) {
      const requestId = String(row.request_id);
      // Re-checked under the lock: the request may have finished or been extended meanwhile.
      if (await this.transaction((conn) => releaseLocked(conn, requestId, now, now))) {
        released++;
        this.logger.warn({ requestId }, 'released an expired deflection reservation');
      }
    }
    return released;
  }

  async used(orgId: string, month: string): Promise<number> {
    const [rows] = await this.pool.query<MonthRow[]>(
      'SELECT used, reserved FROM answers_deflection_months WHERE org_id = ? AND month = ?',
      [orgId, month],
    );
    return Number(rows[0]?.used ?? 0);
  }

  async purge(before: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const [res] = await this.pool.query(
        `DELETE FROM answers_deflection_reservations
          WHERE state IN ('committed', 'released') AND updated_at < ? LIMIT ${PURGE_CHUNK}`,
        [before],
      );
      const n = (res as { affectedRows: number }).affectedRows;
      total += n;
      if (n < PURGE_CHUNK) return total;
    }
  }

  async get(orgId: string): Promise<OrgPolicy | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      'SELECT deflection_monthly_limit, high_confidence_threshold FROM answers_org_policies WHERE org_id = ?',
      [orgId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      deflectionMonthlyLimit: Number(row.deflection_monthly_limit),
      highConfidenceThreshold: Number(row.high_confidence_threshold),
    };
  }

  async set(orgId: string, policy: OrgPolicy, now: Date): Promise<void> {
    await this.pool.query(
      `INSERT INTO answers_org_policies (org_id, deflection_monthly_limit, high_confidence_threshold, updated_at)
       VALUES (?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE deflection_monthly_limit = VALUES(deflection_monthly_limit),
         high_confidence_threshold = VALUES(high_confidence_threshold), updated_at = VALUES(updated_at)`,
      [orgId, policy.deflectionMonthlyLimit, policy.highConfidenceThreshold, now],
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Runs `fn` in a READ COMMITTED transaction, again on deadlock or a racing first insert. */
  private transaction<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, fn, {
      isolation: 'READ COMMITTED',
      attempts: MAX_ATTEMPTS,
      retryDuplicates: true,
      mapError: (err) => mysqlUnavailable(err, 'the answers database'),
    });
  }
}

async function lockReservation(
  conn: PoolConnection,
  requestId: string,
): Promise<ReservationRow | undefined> {
  const [rows] = await conn.query<ReservationRow[]>(
    'SELECT org_id, month, state FROM answers_deflection_reservations WHERE request_id = ? FOR UPDATE',
    [requestId],
  );
  return rows[0];
}

/**
 * The month a deflection at `now` counts in: the calendar month of `now`, but never one before
 * the organization's latest counter (a replica whose clock is behind, or a clock stepped back
 * across a month boundary, does not reopen the previous month: a month's limit starts over once).
 */
async function monthFor(conn: PoolConnection, orgId: string, now: Date): Promise<string> {
  const [rows] = await conn.query<RowDataPacket[]>(
    'SELECT MAX(month) AS latest FROM answers_deflection_months WHERE org_id = ?',
    [orgId],
  );
  const month = monthOf(now);
  const latest = rows[0]?.latest as string | null | undefined;
  return typeof latest === 'string' && latest > month ? latest : month;
}

/** Makes sure the (org, month) counter exists and locks it. */
async function lockMonth(
  conn: PoolConnection,
  orgId: string,
  month: string,
  now: Date,
): Promise<{ used: number; reserved: number }> {
  await conn.query(
    `INSERT INTO answers_deflection_months (org_id, month, used, reserved, updated_at) VALUES (?, ?, 0, 0, ?)
     ON DUPLICATE KEY UPDATE org_id = org_id`,
    [orgId, month, now],
  );
  const [rows] = await conn.query<MonthRow[]>(
    'SELECT used, reserved FROM answers_deflection_months WHERE org_id = ? AND month = ? FOR UPDATE',
    [orgId, month],
  );
  const row = rows[0];
  if (!row) throw new Error('deflection counter row vanished');
  return { used: Number(row.used), reserved: Number(row.reserved) };
}

/** Releases a held reservation (only one that expired before `expiredBefore`, when given). */
async function releaseLocked(
  conn: PoolConnection,
  requestId: string,
  now: Date,
  expiredBefore: Date | undefined,
): Promise<boolean> {
  const [rows] = await conn.query<RowDataPacket[]>(
    'SELECT org_id, month, state, expires_at FROM answers_deflection_reservations WHERE request_id = ? FOR UPDATE',
    [requestId],
  );
  const r = rows[0];
  if (!r || r.state !== 'reserved') return false;
  if (expiredBefore && !(new Date(r.expires_at as Date) < expiredBefore)) return false;
  await conn.query(
    `UPDATE answers_deflection_months SET reserved = GREATEST(reserved, 1) - 1, updated_at = ?
      WHERE org_id = ? AND month = ?`,
    [now, r.org_id, r.month],
  );
  await conn.query(
    "UPDATE answers_deflection_reservations SET state = 'released', updated_at = ? WHERE request_id = ?",
    [now, requestId],
  );
  return true;
}
