import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, isStorageFull, mysqlUnavailable, storageFull } from '@support-agent/shared';

const mysqlError = (errno: number, code: string, message: string): Error =>
  Object.assign(new Error(message), { errno, code, sqlState: 'HY000', fatal: false });

test('when a write fails for want of space (file, MariaDB, JetStream), then it is recognised as a full store', () => {
  const full = [
    Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
    Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT' }),
    mysqlError(1114, 'ER_RECORD_FILE_FULL', "The table 'tickets' is full"),
    mysqlError(1021, 'ER_DISK_FULL', 'Disk full (./t.MAI); waiting for someone to free some space'),
    mysqlError(
      1026,
      'ER_ERROR_ON_WRITE',
      'Error writing file \'./b.000001\' (Errcode: 28 "No space left on device")',
    ),
    mysqlError(
      1030,
      'ER_GET_ERRNO',
      'Got error 28 "No space left on device" from storage engine InnoDB',
    ),
    Object.assign(new Error('insufficient storage resources available'), {
      api_error: {
        code: 500,
        err_code: 10047,
        description: 'insufficient storage resources available',
      },
    }),
  ];
  for (const err of full) assert.equal(isStorageFull(err), true, String(err));
  const notFull = [
    Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }),
    mysqlError(1062, 'ER_DUP_ENTRY', "Duplicate entry '1' for key 'PRIMARY'"),
    mysqlError(1030, 'ER_GET_ERRNO', 'Got error 168 "Unknown (generic) error from engine"'),
    Object.assign(new Error('stream not found'), { api_error: { code: 404, err_code: 10059 } }),
    'ENOSPC',
    undefined,
  ];
  for (const err of notFull) assert.equal(isStorageFull(err), false, String(err));
});

test('when a database is full, then its error becomes a 503 with Retry-After, and other errors pass unchanged', () => {
  const full = mysqlUnavailable(
    mysqlError(1114, 'ER_RECORD_FILE_FULL', 'The table is full'),
    'the tickets database',
  );
  assert.ok(full instanceof AppError);
  assert.equal(full.httpStatus, 503);
  assert.ok((full.retryAfter ?? 0) >= 1);
  assert.match(full.message, /the tickets database/);
  const dup = mysqlError(1062, 'ER_DUP_ENTRY', 'Duplicate entry');
  assert.equal(mysqlUnavailable(dup, 'the tickets database'), dup);
  const trusted = new AppError('not_found', 'no such ticket');
  assert.equal(storageFull(trusted, 'the store'), trusted);
});
