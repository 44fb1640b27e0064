// Secrets in logs, across the whole run (issue 9.5): every Stack records, when it stops, a scan
// of all its processes' captured logs for the admin token and every API key issued through its
// admin API (test/support/stack.ts, TEST_TMP_DIR/log-secret-scan.jsonl). Under `npm test` this
// file runs after the e2e suites and the other security suites, so their stacks are all in it
// (the fault suite, which runs last, checks its own logs the same way).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Scan {
  stack: string;
  secrets: number;
  logBytes: number;
  leaks: string[];
}

test('when the suites before this one ran their stacks, then no captured log contains a key or the admin token', () => {
  const tmp = process.env.TEST_TMP_DIR;
  const file = tmp ? join(tmp, 'log-secret-scan.jsonl') : undefined;
  const scans: Scan[] =
    file && existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Scan)
      : [];
  const leaking = scans.filter((s) => s.leaks.length > 0);
  assert.deepEqual(
    leaking.map((s) => `${s.stack}: ${s.leaks.join(', ')}`),
    [],
    'secrets found in service logs',
  );
  const secrets = scans.reduce((n, s) => n + s.secrets, 0);
  const megabytes = scans.reduce((n, s) => n + s.logBytes, 0) / 1e6;
  console.log(
    `log secret scan: ${scans.length} stacks, ${secrets} secrets, ` +
      `${megabytes.toFixed(1)} MB of logs, leaks 0`,
  );
});
