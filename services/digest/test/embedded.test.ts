// Embedded mode (EMBEDDED=true, no MYSQL_URL/NATS_URL): aggregates in a journal under
// DATA_DIR/digest, events tailed from DATA_DIR/events/tickets.jsonl.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { lastCompleteWeek } from '../src/domain/iso-week.js';
import {
  CSV_EXPORT,
  eventually,
  inWeek,
  newOrg,
  PASSWORD_RESET,
  startDigest,
  ticketEvents,
  type RunningDigest,
  type TicketEventEnvelope,
} from './helpers.js';

describe('embedded mode', () => {
  let dataDir: string;
  let svc: RunningDigest | undefined;
  const org = newOrg('emb');
  const lastWeek = lastCompleteWeek(new Date());
  const env = () => ({ EMBEDDED: 'true', DATA_DIR: dataDir, DIGEST_EMBEDDINGS: 'lexical' });

  function append(events: TicketEventEnvelope[]): void {
    mkdirSync(join(dataDir, 'events'), { recursive: true });
    appendFileSync(
      join(dataDir, 'events', 'tickets.jsonl'),
      events.map((e) => JSON.stringify(e) + '\n').join(''),
    );
  }

  async function countOf(weekStart: string, expected: number): Promise<void> {
    await eventually(
      async () =>
        (await svc!.client.buildDigest({ orgId: org, weekStart })).digest!.ticketCount === expected
          ? true
          : undefined,
      15_000,
      `${expected} tickets`,
    );
  }

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'digest-embedded-'));
  });

  after(async () => {
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when ticket events are appended to the event file, then they are counted and grouped like with the real backends', async () => {
    const events = [...PASSWORD_RESET, ...CSV_EXPORT].flatMap((q, i) =>
      ticketEvents(org, q, inWeek(lastWeek, i % 7, 9), { answered: false }),
    );
    append(events);
    append(events.slice(0, 5)); // the same lines again (a replayed file): recognised by event id
    svc = await startDigest(env());
    await countOf(lastWeek, 7);
    const d = (await svc.client.buildDigest({ orgId: org, weekStart: lastWeek })).digest!;
    assert.match(d.content, /### 1\. [^\n]*password[^\n]* \(4 tickets asked\)/i);
    assert.match(d.content, /### 2\. [^\n]*CSV[^\n]* \(3 tickets asked\)/);
  });

  it('when the service restarts, then digests and counts persist and old events are not counted again', async () => {
    const before = (await svc!.client.getLatestDigest({ orgId: org })).digest!;
    assert.equal(before.summary?.topics.length, 2, 'the structured form is kept with the digest');
    const lean = (await svc!.client.getLatestDigest({ orgId: org, withoutSummary: true })).digest;
    assert.deepEqual(lean, { ...before, summary: undefined }, 'the FAQ asks without the summary');
    await svc!.stop();
    svc = undefined;
    // Lost offset (e.g. the file was restored): everything is read again.
    rmSync(join(dataDir, 'digest', 'events.offset'), { force: true });
    append(ticketEvents(org, 'A new question while stopped', inWeek(lastWeek, 6, 22)));

    svc = await startDigest(env());
    assert.deepEqual((await svc.client.getLatestDigest({ orgId: org })).digest, before);
    await countOf(lastWeek, 8);
    await new Promise((r) => setTimeout(r, 300));
    await countOf(lastWeek, 8);
  });

  it('when the weekly run is due in embedded mode, then the last week is built automatically, once', async () => {
    await svc!.stop();
    const other = newOrg('emb-sched');
    append(ticketEvents(other, 'How do I invite a colleague?', inWeek(lastWeek, 1)));
    svc = await startDigest({
      ...env(),
      DIGEST_SCHEDULER_ENABLED: 'true',
      DIGEST_SCHEDULE_OFFSET_MINUTES: '0',
      DIGEST_SCHEDULER_TICK_MS: '50',
    });
    const built = await eventually(
      async () => (await svc!.client.getLatestDigest({ orgId: other })).digest,
      15_000,
      'the scheduled digest',
    );
    assert.equal(built.weekStart, lastWeek);
    assert.equal(built.ticketCount, 1);
    await svc.stop();
    svc = await startDigest({
      ...env(),
      DIGEST_SCHEDULER_ENABLED: 'true',
      DIGEST_SCHEDULE_OFFSET_MINUTES: '0',
      DIGEST_SCHEDULER_TICK_MS: '50',
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(
      (await svc.client.getLatestDigest({ orgId: other })).digest!.generatedAt,
      built.generatedAt,
      'not built again after a restart',
    );
  });

  it('when the backfill replays the event file, then the counts are the same', async () => {
    await svc!.stop();
    svc = undefined;
    const cli = fileURLToPath(new URL('../src/cli/backfill.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', cli, '--from-stream'], {
      env: { PATH: process.env.PATH ?? '', EMBEDDED: 'true', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, stderr);
    const summary = JSON.parse(stdout.trim().split('\n').pop()!) as {
      applied: number;
      duplicates: number;
      tickets: number;
    };
    assert.equal(summary.tickets, 9);
    assert.equal(summary.duplicates, 5);
    svc = await startDigest(env());
    await countOf(lastWeek, 8);
  });

  it('when tickets hold NUL, other control characters or bidi overrides, then the digest text holds none of them', async () => {
    const tenant = newOrg('emb-ctl');
    const questions = [
      'How do I reset my pass\u0000word?',
      'How do I reset my password\u202E\u2066 quickly?\u2069\u202C',
      'How can I reset my password\u0007\u001B[31m\u0085\u200F?',
      'Reset my\u00A0password\u200E\u202A please\u202D\u2067\u2068',
    ];
    append(questions.flatMap((q, i) => ticketEvents(tenant, q, inWeek(lastWeek, i, 11))));
    await eventually(
      async () =>
        (await svc!.client.buildDigest({ orgId: tenant, weekStart: lastWeek })).digest!
          .ticketCount === questions.length || undefined,
      15_000,
      'the tickets counted',
    );
    const d = (await svc!.client.getLatestDigest({ orgId: tenant })).digest!;
    assert.match(d.content, /password/i);
    const unsafe =
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
    assert.doesNotMatch(d.content, unsafe);
    assert.doesNotMatch(JSON.stringify(d.summary), /\\u00[01][0-9a-f]|\\u007f/i);
    assert.doesNotMatch(JSON.stringify(d.summary), unsafe);
    assert.match(d.content, /reset my password/i, 'words around a removed character stay joined');
  });
});
