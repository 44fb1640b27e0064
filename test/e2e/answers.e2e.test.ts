// End-to-end: grounded answers and the monthly deflection ledger, through the gateway over
// HTTP, with every service as its own process on real MariaDB, Redis and NATS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { secondsToNextUtcMonth } from '../support/pipeline.js';
import { SAMPLE_KB } from '../support/kb.js';
import { Stack, api } from '../support/stack.js';

let stack: Stack;
let key: string;

const KB = SAMPLE_KB;
const COVERED = 'How do I export tickets to CSV?';
const UNCOVERED = [
  'What is the boiling point of mercury on Jupiter?',
  'Does your product support quantum teleportation of pets?',
  'Can I change the colour of the sidebar?',
  'Who won the chess olympiad in 1936?',
  'Recommend a good lasagne recipe with spinach',
];

before(async () => {
  stack = await Stack.onTestBackends('e2e-answers', {
    env: { DIGEST_METRICS_PORT: '0' },
  });
  key = await stack.orgWithKey('ans-main');
  await stack.admin('POST', '/admin/v1/orgs/ans-main/kb/entries', KB);
});

after(() => stack?.stop());

const ask = (k: string, body: unknown) =>
  api(stack.baseUrl(), 'POST', '/api/v1/agent/answers', { key: k, body });

const usage = async (org: string) =>
  (await stack.admin<{ month: string; deflections_used: number; deflection_limit: number }>(
    'GET',
    `/admin/v1/orgs/${org}/usage`,
  ))!;

test('when a question is covered by the KB, then the answer is grounded in that entry and high-confidence', async () => {
  const res = await ask(key, { question: COVERED });
  assert.equal(res.status, 200, res.text);
  const entry = KB.find((e) => e.question === COVERED)!;
  assert.ok(res.json.answer.includes(entry.answer), `answer quotes the entry: ${res.json.answer}`);
  for (const other of KB.filter((e) => e !== entry)) {
    assert.ok(!res.json.answer.includes(other.answer), `no text of ${other.id}`);
  }
  assert.ok(Number.isInteger(res.json.confidence));
  assert.ok(res.json.confidence >= 75 && res.json.confidence <= 100, `${res.json.confidence}`);
  assert.equal(res.json.high_confidence, true);
  assert.equal(res.json.answered_fully, true);
  assert.equal(res.json.sources?.[0]?.question, entry.question, 'the first source names it');
  for (const s of res.json.sources) assert.ok(s.score >= 0 && s.score <= 1);
  // A loose paraphrase still lands on the same entry.
  const para = await ask(key, { question: 'I forgot my password, how do I reset it?' });
  assert.ok(para.json.answer.includes(KB[0]!.answer));
  assert.equal(para.json.sources?.[0]?.question, KB[0]!.question);
});

test('when a question is not covered by the KB, then it says so with low confidence and answered_fully false', async () => {
  for (const question of UNCOVERED.slice(0, 3)) {
    const res = await ask(key, { question });
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.answer, /couldn't find this in the knowledge base/);
    for (const e of KB) assert.ok(!res.json.answer.includes(e.answer), 'nothing made up from KB');
    assert.equal(res.json.answered_fully, false);
    assert.equal(res.json.high_confidence, false);
    assert.ok(res.json.confidence <= 10, `confidence ${res.json.confidence}`);
    assert.equal(res.json.sources, undefined, 'no sources when nothing is relevant');
  }
});

test('when the question is 2000 code points it is accepted; 2001 is 400 naming question', async () => {
  // Astral characters are 2 UTF-16 units each: lengths must count code points.
  const ok = await ask(key, { question: '😀'.repeat(2000) });
  assert.equal(ok.status, 200, ok.text);
  const okLatin = await ask(key, {
    question: `${COVERED} ${'x'.repeat(2000 - COVERED.length - 1)}`,
  });
  assert.equal(okLatin.status, 200, okLatin.text);
  for (const question of ['😀'.repeat(2001), 'é'.repeat(2001)]) {
    const res = await ask(key, { question });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.equal(res.json.error.param, 'question');
  }
});

test('when the question is missing, empty or only white space, then 400 naming question', async () => {
  for (const body of [{}, { question: '' }, { question: '   \n\t ' }, { question: 42 }]) {
    const res = await ask(key, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.json.error.code, 'invalid_request');
    assert.equal(res.json.error.param, 'question');
  }
});

test('when the key lacks answers:write, then 403 insufficient_scope with the challenge', async () => {
  const readOnly = await stack.keyFor('ans-main', ['kb:read', 'tickets:write']);
  const res = await ask(readOnly, { question: COVERED });
  assert.equal(res.status, 403);
  assert.equal(res.json.error.code, 'insufficient_scope');
  const challenge = res.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer /);
  assert.match(challenge, /error="insufficient_scope"/);
  assert.match(challenge, /scope="answers:write"/);
  assert.match(
    challenge,
    /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"/,
  );
});

test('when 60 high-confidence requests race for 10 slots, then exactly 10 succeed, 50 get 429, and 10 is still the count after every process restarts', async () => {
  const limited = await stack.orgWithKey('ans-limit', undefined, { deflection_monthly_limit: 10 });
  await stack.admin('POST', '/admin/v1/orgs/ans-limit/kb/entries', KB);
  const results = await Promise.all(
    Array.from({ length: 60 }, () => ask(limited, { question: COVERED })),
  );
  const expectedRetry = secondsToNextUtcMonth(new Date());
  const ok = results.filter((r) => r.status === 200);
  const limitedOut = results.filter((r) => r.status === 429);
  assert.equal(ok.length, 10, results.map((r) => r.status).join(','));
  assert.equal(limitedOut.length, 50);
  for (const r of ok) assert.equal(r.json.high_confidence, true);
  for (const r of limitedOut) {
    assert.equal(r.json.error.code, 'deflection_limit_reached');
    const retryAfter = Number(r.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter), `Retry-After ${r.headers.get('retry-after')}`);
    assert.ok(Math.abs(retryAfter - expectedRetry) <= 30, `${retryAfter} vs ${expectedRetry}`);
  }
  const month = new Date().toISOString().slice(0, 7);
  assert.deepEqual(await usage('ans-limit'), {
    month,
    deflections_used: 10,
    deflection_limit: 10,
  });

  // Every process, upstreams and gateway, goes down and comes back.
  for (const name of stack.upstreams.keys()) await stack.restartService(name);
  await stack.restartGateway(0);
  assert.equal((await usage('ans-limit')).deflections_used, 10);
  const again = await ask(limited, { question: COVERED });
  assert.equal(again.status, 429, 'the limit still holds after the restarts');
  assert.equal(again.json.error.code, 'deflection_limit_reached');
  assert.equal((await usage('ans-limit')).deflections_used, 10);
});

test('when answers are low-confidence, then they never count toward the deflection limit', async () => {
  // Confidence is a calibrated probability: a clear paraphrase of an entry scores in the
  // 90s, so "relevant but under the threshold" needs a threshold of 100 here.
  const k = await stack.orgWithKey('ans-low', undefined, {
    deflection_monthly_limit: 2,
    high_confidence_threshold: 100,
  });
  await stack.admin('POST', '/admin/v1/orgs/ans-low/kb/entries', KB);
  for (const question of UNCOVERED) {
    const res = await ask(k, { question });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.high_confidence, false);
  }
  // Relevant, but under this org's threshold of 100: answered, not counted.
  for (let i = 0; i < 3; i++) {
    const res = await ask(k, { question: 'I forgot my password, how do I reset it?' });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.confidence < 100, `confidence ${res.json.confidence}`);
    assert.equal(res.json.high_confidence, false);
    assert.ok(res.json.answer.includes(KB[0]!.answer));
  }
  assert.equal((await usage('ans-low')).deflections_used, 0);
  await stack.admin('PATCH', '/admin/v1/orgs/ans-low/settings', { high_confidence_threshold: 85 });
  await new Promise((r) => setTimeout(r, 1100)); // settings reach every gateway within 1 s
  // The slots are all still free: two high-confidence answers fit, the third does not.
  assert.equal((await ask(k, { question: COVERED })).json.high_confidence, true);
  assert.equal((await ask(k, { question: COVERED })).json.high_confidence, true);
  assert.equal((await ask(k, { question: COVERED })).status, 429);
  assert.equal((await usage('ans-low')).deflections_used, 2);
});
