// GenerateAnswer, GetUsage and SetOrgPolicy through gRPC, with the ledger in a real MariaDB
// (TEST_MYSQL_URL) and an in-test knowledge service.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { MysqlLedger } from '../src/data-access/mysql-ledger.js';
import { monthOf } from '../src/domain/month.js';
import { callUnary, createLogger } from '@support-agent/shared';
import { KB, rejection, startAnswers, testEnv, type RunningAnswers } from './support/service.js';
import { KnowledgeStub, TicketsStub } from './support/stubs.js';
import { stopAll } from '../../../test/support/testing.js';

const POLICY = { deflectionMonthlyLimit: 1000, highConfidenceThreshold: 75 };

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let knowledge: KnowledgeStub;
let tickets: TicketsStub;
let env: Record<string, string>;
let svc: RunningAnswers;

before(async () => {
  db = await createTestDatabase('answers_gen');
  knowledge = new KnowledgeStub();
  tickets = new TicketsStub();
  env = testEnv({
    MYSQL_URL: db.url,
    KNOWLEDGE_ADDR: await knowledge.start(),
    TICKETS_ADDR: await tickets.start(),
    RESERVATION_TTL_MS: '1000',
  });
  svc = await startAnswers(env);
});

after(() => stopAll(svc, knowledge, tickets, db));

/** A fresh org with the shared KB, so tests do not share ledger rows. */
function org(name: string): string {
  knowledge.kb.set(name, KB);
  return name;
}

async function reservedSlots(orgId: string): Promise<number> {
  const conn = await mysql.createConnection({ uri: db.url });
  try {
    const [rows] = await conn.query(
      'SELECT reserved FROM answers_deflection_months WHERE org_id = ?',
      [orgId],
    );
    return (rows as Array<{ reserved: number }>).reduce((s, r) => s + Number(r.reserved), 0);
  } finally {
    await conn.end();
  }
}

describe('grounded answers', () => {
  test('when the KB covers the question, then the answer comes from that entry, cites it and is counted', async () => {
    const o = org('covered');
    const res = await svc.generate(o, 'How can I reset my password?', POLICY);
    assert.match(res.answer, /Reset password/);
    assert.equal(res.sources[0]?.entryId, 'kb-reset');
    assert.equal(res.sources[0]?.question, 'How do I reset my password?');
    assert.ok(res.confidence >= 75 && res.confidence <= 100, `confidence ${res.confidence}`);
    assert.equal(Number.isInteger(res.confidence), true);
    assert.equal(res.highConfidence, true);
    assert.equal(res.answeredFully, true);
    const usage = await svc.usage(o, 1000);
    assert.deepEqual(usage, {
      month: monthOf(new Date()),
      deflectionsUsed: 1,
      deflectionLimit: 1000,
    });
  });

  test('when several entries match, then the answer cites the top-ranked hit first', async () => {
    const o = 'ranked';
    knowledge.kb.set(o, [
      ...KB,
      {
        id: 'kb-reset-mobile',
        question: 'How do I reset my password on mobile?',
        answer: 'In the mobile app open Profile, then Security, and tap "Reset password".',
      },
    ]);
    const res = await svc.generate(o, 'Reset my password on mobile', POLICY);
    assert.equal(res.sources[0]?.entryId, 'kb-reset-mobile');
    assert.match(res.answer, /mobile app/);
  });

  test('when the KB has nothing relevant, then the answer says so with low confidence and is not counted', async () => {
    const o = org('uncovered');
    const res = await svc.generate(
      o,
      'What is the airspeed velocity of an unladen swallow?',
      POLICY,
    );
    assert.match(res.answer, /couldn't find this in the knowledge base/);
    assert.ok(res.confidence < 30, `confidence ${res.confidence}`);
    assert.equal(res.answeredFully, false);
    assert.equal(res.highConfidence, false);
    assert.deepEqual(res.sources, []);
    assert.equal((await svc.usage(o, 1000)).deflectionsUsed, 0);
    assert.equal(await reservedSlots(o), 0);
  });

  test('when the threshold is 0, then an answer with nothing relevant is still not high-confidence nor counted', async () => {
    const o = org('threshold-zero');
    const res = await svc.generate(o, 'Tell me about quantum gravity', {
      deflectionMonthlyLimit: 5,
      highConfidenceThreshold: 0,
    });
    assert.equal(res.highConfidence, false);
    assert.equal((await svc.usage(o, 5)).deflectionsUsed, 0);
  });

  test('when the question has 2000 code points, then it is accepted, and with 2001 it is invalid_request on question', async () => {
    const o = org('lengths');
    // Astral characters: 2000 code points but 4000 UTF-16 units.
    await svc.generate(o, '😀'.repeat(2000), POLICY);
    const err = await rejection(svc.generate(o, '😀'.repeat(2001), POLICY));
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.param, 'question');
  });

  test('when the question is empty or only white space, then it is invalid_request on question', async () => {
    for (const q of ['', '   \n\t ']) {
      const err = await rejection(svc.generate(org('blank'), q, POLICY));
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.param, 'question');
    }
  });

  test('when the policy threshold is out of range, then it is invalid_request', async () => {
    const err = await rejection(
      svc.generate(org('bad-policy'), 'How do I reset my password?', {
        deflectionMonthlyLimit: 10,
        highConfidenceThreshold: 101,
      }),
    );
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.param, 'high_confidence_threshold');
  });
});

describe('deflection ledger', () => {
  test('when 60 high-confidence requests race for a limit of 10, then exactly 10 succeed, 50 get deflection_limit_reached, and the count is 10 after a restart', async () => {
    const o = org('burst');
    const policy = { deflectionMonthlyLimit: 10, highConfidenceThreshold: 75 };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, () => svc.generate(o, 'How do I reset my password?', policy)),
    );
    const ok = outcomes.filter((r) => r.status === 'fulfilled');
    const limited = outcomes.filter(
      (r) =>
        r.status === 'rejected' &&
        (r.reason as { code?: string }).code === 'deflection_limit_reached',
    );
    assert.equal(ok.length, 10);
    assert.equal(limited.length, 50);
    for (const r of ok)
      assert.equal(
        (r as PromiseFulfilledResult<{ highConfidence: boolean }>).value.highConfidence,
        true,
      );
    const retryAfter = (limited[0] as PromiseRejectedResult).reason.retryAfter as number;
    assert.ok(retryAfter > 0 && retryAfter <= 31 * 86_400, `retryAfter ${retryAfter}`);
    assert.equal((await svc.usage(o, 10)).deflectionsUsed, 10);
    assert.equal(await reservedSlots(o), 0);

    await svc.stop();
    svc = await startAnswers(env);
    assert.equal((await svc.usage(o, 10)).deflectionsUsed, 10);
    const err = await rejection(svc.generate(o, 'How do I reset my password?', policy));
    assert.equal(err.code, 'deflection_limit_reached');
  });

  test('when answers are below the threshold, then they never count, even at a limit of 1', async () => {
    const o = org('low');
    const policy = { deflectionMonthlyLimit: 1, highConfidenceThreshold: 75 };
    // Shares one of the entry's two terms: a relevant but weak hit.
    for (let i = 0; i < 5; i++) {
      const res = await svc.generate(o, 'password change', policy);
      assert.equal(res.highConfidence, false);
      assert.ok(res.confidence < 75);
    }
    assert.equal((await svc.usage(o, 1)).deflectionsUsed, 0);
    assert.equal(
      (await svc.generate(o, 'How do I reset my password?', policy)).highConfidence,
      true,
    );
    assert.equal((await svc.usage(o, 1)).deflectionsUsed, 1);
  });

  test('when knowledge is down, then the call is service_unavailable and the reserved slot is given back', async () => {
    const o = org('kb-down');
    const policy = { deflectionMonthlyLimit: 1, highConfidenceThreshold: 75 };
    knowledge.down = true;
    try {
      const err = await rejection(svc.generate(o, 'How do I reset my password?', policy));
      assert.equal(err.code, 'service_unavailable');
    } finally {
      knowledge.down = false;
    }
    assert.equal(await reservedSlots(o), 0);
    assert.equal(
      (await svc.generate(o, 'How do I reset my password?', policy)).highConfidence,
      true,
    );
  });

  test('when the caller gives up before the answer is ready, then the slot is released and nothing counts', async () => {
    const o = org('impatient');
    knowledge.delayMs = 1_500;
    try {
      const err = await rejection(
        callUnary(
          svc.client.generateAnswer.bind(svc.client),
          { orgId: o, question: 'How do I reset my password?', policy: POLICY },
          { timeoutMs: 400 },
        ),
      );
      assert.equal(err.code, 'service_unavailable');
      await new Promise((r) => setTimeout(r, 1_800));
    } finally {
      knowledge.delayMs = 0;
    }
    assert.equal((await svc.usage(o, 1000)).deflectionsUsed, 0);
    assert.equal(await reservedSlots(o), 0);
  });

  test('when a generation crashed and left its reservation, then the sweeper releases it after the TTL', async () => {
    const o = org('stuck');
    const policy = { deflectionMonthlyLimit: 1, highConfidenceThreshold: 75 };
    // What a process that died mid-generation leaves behind: a reserved slot nobody will settle.
    const ledger = await MysqlLedger.open(db.url, createLogger('test', 'silent'));
    try {
      const r = await ledger.reserve({
        orgId: o,
        requestId: 'crashed-1',
        limit: 1,
        now: new Date(),
        ttlMs: 500,
      });
      assert.equal(r.kind, 'reserved');
    } finally {
      await ledger.close();
    }
    const err = await rejection(svc.generate(o, 'How do I reset my password?', policy));
    assert.equal(err.code, 'deflection_limit_reached');
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(await reservedSlots(o), 0);
    assert.equal(
      (await svc.generate(o, 'How do I reset my password?', policy)).highConfidence,
      true,
    );
    assert.equal((await svc.usage(o, 1)).deflectionsUsed, 1);
  });
});

describe('org policies', () => {
  test('when an org never sent a policy, then the defaults apply (limit 1000)', async () => {
    const usage = await svc.usage(org('never-seen'));
    assert.equal(usage.deflectionLimit, 1000);
    assert.equal(usage.deflectionsUsed, 0);
    assert.match(usage.month, /^\d{4}-\d{2}$/);
  });

  test('when SetOrgPolicy stored a policy, then GetUsage without a limit and GenerateAnswer without a policy use it', async () => {
    const o = org('stored');
    await svc.setPolicy(o, { deflectionMonthlyLimit: 1, highConfidenceThreshold: 75 });
    assert.equal((await svc.usage(o)).deflectionLimit, 1);
    await svc.generate(o, 'How do I reset my password?');
    const err = await rejection(svc.generate(o, 'How do I reset my password?'));
    assert.equal(err.code, 'deflection_limit_reached');
  });

  test('when SetOrgPolicy gets a limit of 0, then it is invalid_request', async () => {
    const err = await rejection(
      svc.setPolicy(org('zero'), { deflectionMonthlyLimit: 0, highConfidenceThreshold: 75 }),
    );
    assert.equal(err.code, 'invalid_request');
  });
});
