// Answers while the deflection ledger's MariaDB is silent (every byte to and from it held by a
// relay, as behind a blackhole): each answer comes without waiting for the ledger and cannot
// deflect (never high-confidence, nothing counted); reservations that go through late are given
// back; an organization seen at its limit stays refused; the monthly limit is never exceeded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { startRelay, type Relay } from '../../../test/support/tcp-relay.js';
import { stopAll } from '../../../test/support/testing.js';
import {
  KB,
  rejection,
  startAnswers,
  testEnv,
  waitFor,
  type RunningAnswers,
} from './support/service.js';
import { KnowledgeStub, TicketsStub } from './support/stubs.js';

const LIMIT = 2;
const POLICY = { deflectionMonthlyLimit: LIMIT, highConfidenceThreshold: 75 };
const COVERED = 'How can I reset my password?';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let relay: Relay;
let knowledge: KnowledgeStub;
let tickets: TicketsStub;
let svc: RunningAnswers;

before(async () => {
  db = await createTestDatabase('answers_fallback');
  const url = new URL(db.url);
  relay = await startRelay('127.0.0.1', url.hostname, Number(url.port));
  url.host = `127.0.0.1:${relay.port}`;
  knowledge = new KnowledgeStub();
  tickets = new TicketsStub();
  svc = await startAnswers(
    testEnv({
      MYSQL_URL: url.toString(),
      KNOWLEDGE_ADDR: await knowledge.start(),
      TICKETS_ADDR: await tickets.start(),
    }),
  );
});

after(async () => {
  relay.silent = false;
  await stopAll(svc, knowledge, tickets);
  await relay.close();
  await db.drop();
});

/** The month counters of the org, read past the relay. */
async function counters(orgId: string): Promise<{ used: number; reserved: number }> {
  const conn = await mysql.createConnection({ uri: db.url });
  try {
    const [rows] = await conn.query(
      'SELECT used, reserved FROM answers_deflection_months WHERE org_id = ?',
      [orgId],
    );
    const list = rows as Array<{ used: number; reserved: number }>;
    return {
      used: list.reduce((s, r) => s + Number(r.used), 0),
      reserved: list.reduce((s, r) => s + Number(r.reserved), 0),
    };
  } finally {
    await conn.end();
  }
}

/** The org's reservations by state, read past the relay. */
async function reservations(orgId: string): Promise<Record<string, number>> {
  const conn = await mysql.createConnection({ uri: db.url });
  try {
    const [rows] = await conn.query(
      'SELECT state, COUNT(*) AS n FROM answers_deflection_reservations WHERE org_id = ? GROUP BY state',
      [orgId],
    );
    const byState: Record<string, number> = { reserved: 0, released: 0, committed: 0 };
    for (const r of rows as Array<{ state: string; n: number }>) byState[r.state] = Number(r.n);
    return byState;
  } finally {
    await conn.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

describe('answers while the deflection ledger is silent', () => {
  test('when MariaDB stops answering, then answers go on without deflecting and the limit holds', async () => {
    const org = 'fallback-org';
    knowledge.kb.set(org, KB);
    assert.equal((await svc.generate(org, COVERED, POLICY)).highConfidence, true);

    relay.silent = true;
    const during: number[] = [];
    for (let i = 0; i < 6; i++) {
      const { value, ms } = await timed(() => svc.generate(org, COVERED, POLICY));
      during.push(ms);
      assert.equal(value.highConfidence, false, 'an answer without a slot never deflects');
      assert.match(value.answer, /Reset password/);
      assert.equal(value.sources[0]?.entryId, 'kb-reset');
    }
    // The first waits for the ledger (1 s), then it is suspect and not waited for.
    assert.ok(during[0]! < 2_000, `first answer took ${during[0]} ms`);
    assert.ok(Math.max(...during.slice(1)) < 500, `answers took ${during.join(', ')} ms`);
    await sleep(1_000); // longer than a probe may take
    relay.silent = false;

    // The first answer's reservation, held in the silence, went through late and was released.
    await waitFor(
      async () => {
        const r = await reservations(org);
        return r.released === 1 && r.reserved === 0;
      },
      20_000,
      'the late reservation released',
    );
    assert.deepEqual(await counters(org), { used: 1, reserved: 0 });

    // Back to normal once a probe is answered: the second slot deflects, then the limit holds.
    let high = false;
    for (let i = 0; i < 50 && !high; i++) {
      high = (await svc.generate(org, COVERED, POLICY)).highConfidence;
      if (!high) await sleep(100);
    }
    assert.equal(high, true, 'deflecting again once the ledger answers');
    assert.equal(
      (await rejection(svc.generate(org, COVERED, POLICY))).code,
      'deflection_limit_reached',
    );

    // Silent again: an organization last seen at its limit stays refused, without waiting.
    relay.silent = true;
    const { value: refused, ms } = await timed(() => rejection(svc.generate(org, COVERED, POLICY)));
    assert.equal(refused.code, 'deflection_limit_reached');
    assert.ok(ms < 2_000, `refused after ${ms} ms`);
    relay.silent = false;

    await waitFor(async () => (await counters(org)).reserved === 0, 20_000, 'slots settled');
    assert.deepEqual(await counters(org), { used: LIMIT, reserved: 0 }, 'never over the limit');
  });
});
