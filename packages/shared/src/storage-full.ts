import { AppError } from './errors.js';

/** Seconds a client is asked to wait when a store is out of space (freeing it takes an operator). */
export const STORAGE_FULL_RETRY_AFTER = 5;

/** errno codes of a write refused for want of space: no space left, quota exceeded. */
const FS_FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

/**
 * MySQL / MariaDB errors of a full disk: ER_DISK_FULL (1021), ER_RECORD_FILE_FULL (1114, "The
 * table is full"), and writes that fail with OS error 28 (ENOSPC): ER_ERROR_ON_WRITE (1026),
 * ER_GET_ERRNO (1030), ER_CANT_CREATE_TABLE (1005), ER_ERROR_ON_CLOSE (1023),
 * ER_TEMP_FILE_WRITE_FAILURE (1878).
 */
const MYSQL_FULL_ERRNOS = new Set([1021, 1114]);
const MYSQL_OS_ERROR_ERRNOS = new Set([1005, 1023, 1026, 1030, 1878]);
const OS_ERROR_28 = /\b(errno|errcode|error)\W{0,3}28\b|no space left/i;

/**
 * NATS JetStream errors of a server out of storage: 10047 (insufficient storage resources),
 * 10023 (insufficient resources), 10077 (stream store failed); the server also logs "JetStream
 * resource limits exceeded".
 */
const JETSTREAM_FULL_CODES = new Set([10023, 10047, 10077]);
const JETSTREAM_FULL_TEXT =
  /insufficient (storage )?resources|resource limits exceeded|no space left/i;

interface ErrorShape {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
  api_error?: { err_code?: unknown; description?: unknown };
}

/**
 * True when `err` says a store ran out of space: a file write (ENOSPC, EDQUOT), MySQL/MariaDB
 * (disk or table full, OS error 28) or NATS JetStream (insufficient storage resources).
 */
export function isStorageFull(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as ErrorShape;
  if (typeof e.code === 'string' && FS_FULL_CODES.has(e.code)) return true;
  if (typeof e.errno === 'number') {
    if (MYSQL_FULL_ERRNOS.has(e.errno)) return true;
    if (MYSQL_OS_ERROR_ERRNOS.has(e.errno) && OS_ERROR_28.test(String(e.message))) return true;
  }
  const api = e.api_error;
  if (api && typeof api.err_code === 'number' && JETSTREAM_FULL_CODES.has(api.err_code))
    return true;
  if (api && JETSTREAM_FULL_TEXT.test(String(api.description))) return true;
  return false;
}

/**
 * A storage-full error becomes service_unavailable (503 with Retry-After at the gateway): the
 * write did not happen and the same request succeeds once space is freed. Anything else, an
 * AppError included, passes through unchanged.
 */
export function storageFull(err: unknown, what: string): unknown {
  if (err instanceof AppError || !isStorageFull(err)) return err;
  return new AppError('service_unavailable', `${what} is out of storage space; retry later`, {
    retryAfter: STORAGE_FULL_RETRY_AFTER,
    cause: err,
  });
}
