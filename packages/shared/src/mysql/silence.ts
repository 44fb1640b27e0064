import type { Pool, PoolConnection } from 'mysql2/promise';

/**
 * How long a query may go unanswered before its connection is dropped. mysql2 has no such
 * limit: behind a blackhole (packets dropped, no RST) a query waited for TCP's retransmissions,
 * whose back-off outlasts the outage, so after a 60 s blackhole every pooled connection stayed
 * stuck for tens of seconds and the service with them. With the limit a silent connection is
 * destroyed, the caller gets an error (a 503 upstream) and the pool opens a new connection,
 * which works as soon as the network does.
 */
export const MYSQL_QUERY_TIMEOUT_MS = 5_000;

export class MysqlSilentError extends Error {
  readonly code = 'MYSQL_SILENT';
  /** As for a lost connection: the database is unavailable (mysqlUnavailable → 503). */
  readonly fatal = true;
  constructor(ms: number) {
    super(`MySQL did not answer within ${ms} ms; the connection was dropped`);
    this.name = 'MysqlSilentError';
  }
}

type Method = 'query' | 'execute' | 'beginTransaction' | 'commit' | 'rollback';
/** What a transaction's connection sends to the server, each watched. */
const CONNECTION_METHODS = new Set<string | symbol>([
  'query',
  'execute',
  'beginTransaction',
  'commit',
  'rollback',
]);
type Call = (...args: unknown[]) => Promise<unknown>;

/** Runs `method` on the connection; a call unanswered within `ms` destroys the connection. */
async function watched(conn: PoolConnection, method: Method, args: unknown[], ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      conn.destroy();
      reject(new MysqlSilentError(ms));
    }, ms);
  });
  try {
    const call = (conn[method] as unknown as Call).apply(conn, args);
    call.catch(() => undefined); // settles after the connection is destroyed
    return await Promise.race([call, silent]);
  } finally {
    clearTimeout(timer);
  }
}

/** A connection whose every round trip (statements, BEGIN, COMMIT, ROLLBACK) is watched. */
function watchConnection(conn: PoolConnection, ms: number): PoolConnection {
  return new Proxy(conn, {
    get(target, prop, receiver) {
      if (CONNECTION_METHODS.has(prop)) {
        return (...args: unknown[]) => watched(target, prop as Method, args, ms);
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as Call).bind(target) : value;
    },
  });
}

/** A connection from the pool, or MysqlSilentError when none comes within `ms`. */
async function connection(pool: Pool, ms: number): Promise<PoolConnection> {
  const pending = pool.getConnection();
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      pending.then((c) => c.release()).catch(() => undefined);
      reject(new MysqlSilentError(ms));
    }, ms);
  });
  try {
    return await Promise.race([pending, silent]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The pool with every query and execute (its own and its connections') under the silence
 * limit `ms` (0: none).
 */
export function watchSilence(pool: Pool, ms: number): Pool {
  if (ms <= 0) return pool;
  const run = async (method: 'query' | 'execute', args: unknown[]) => {
    const conn = await connection(pool, ms);
    let destroyed = false;
    try {
      return await watched(conn, method, args, ms);
    } catch (err) {
      destroyed = err instanceof MysqlSilentError;
      throw err;
    } finally {
      if (!destroyed) conn.release();
    }
  };
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === 'query' || prop === 'execute') {
        return (...args: unknown[]) => run(prop, args);
      }
      if (prop === 'getConnection') {
        return async () => watchConnection(await connection(target, ms), ms);
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as Call).bind(target) : value;
    },
  });
}
