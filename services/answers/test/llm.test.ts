// The LLM path against a local OpenAI-compatible stub that checks the request shape and
// plays recorded replies: good answers are used; malformed JSON, unknown citations, 429s,
// 5xx, timeouts and an open circuit fall back to the built-in provider, never an error.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { callUnary } from '@support-agent/shared';
import { KB, startAnswers, testEnv, type RunningAnswers } from './support/service.js';
import { KnowledgeStub, OpenAiStub, TicketsStub } from './support/stubs.js';
import { stopAll } from '../../../test/support/testing.js';

const MODEL = 'test-model';
/** The name the LLM provider reports itself by (openai-llm.ts). */
const PROVIDER = `openai:${MODEL}`;
const POLICY = { deflectionMonthlyLimit: 1000, highConfidenceThreshold: 75 };
const QUESTION = 'How can I reset my password?';
const EXTRACTIVE = /Open Settings, choose Security and click "Reset password"/;

let knowledge: KnowledgeStub;
let tickets: TicketsStub;
let llm: OpenAiStub;
let svc: RunningAnswers;
let baseEnv: Record<string, string>;

const answer = (
  fields: Partial<{
    answer: string;
    answered_fully: boolean;
    cited_entry_ids: string[];
    support: number;
  }>,
) =>
  JSON.stringify({
    answer:
      'To reset your password open Settings > Security and click Reset password; the emailed link works for an hour.',
    answered_fully: true,
    cited_entry_ids: ['kb-reset'],
    support: 90,
    ...fields,
  });

before(async () => {
  knowledge = new KnowledgeStub();
  tickets = new TicketsStub();
  llm = new OpenAiStub(MODEL);
  baseEnv = {
    KNOWLEDGE_ADDR: await knowledge.start(),
    TICKETS_ADDR: await tickets.start(),
    OPENAI_BASE_URL: await llm.start(),
    OPENAI_API_KEY: 'sk-test-key',
    ANSWERS_MODEL: MODEL,
    LLM_TIMEOUT_MS: '1500',
    LLM_MAX_RETRIES: '2',
    LLM_BREAKER_FAILURES: '1000',
  };
  svc = await startAnswers(testEnv(baseEnv));
});

after(() => stopAll(svc, knowledge, tickets, llm));

let orgCounter = 0;
function org(): string {
  const name = `llm-${++orgCounter}`;
  knowledge.kb.set(name, KB);
  return name;
}

beforeEach(() => {
  llm.requests.length = 0;
  llm.replies = [];
});

function assertShape(): void {
  assert.ok(llm.requests.length > 0, 'the LLM was called');
  for (const r of llm.requests) assert.deepEqual(r.shapeErrors, []);
}

describe('answers with an LLM', () => {
  test('when the LLM returns a grounded answer, then it is used and its support caps the calibrated confidence', async () => {
    llm.replies = [{ content: answer({}) }];
    const o = org();
    const res = await svc.generate(o, QUESTION, POLICY);
    assert.match(res.answer, /^To reset your password open Settings/);
    assert.equal(res.confidence, 90); // min(calibrated ≈ 99 for an exact match, 90 support)
    assert.equal(res.highConfidence, true);
    assert.equal(res.answeredFully, true);
    assert.deepEqual(
      res.sources.map((s) => s.entryId),
      ['kb-reset'],
    );
    assertShape();
    const req = llm.requests[0]!;
    assert.equal(req.headers.authorization, 'Bearer sk-test-key');
    const messages = req.body.messages as Array<{ role: string; content: string }>;
    assert.match(messages[0]!.content, /ONLY/);
    assert.match(messages[1]!.content, /kb-reset/);
    assert.match(messages[1]!.content, /How can I reset my password\?/);
    const schema = (req.body.response_format as { json_schema: { schema: { required: string[] } } })
      .json_schema.schema;
    assert.deepEqual([...schema.required].sort(), [
      'answer',
      'answered_fully',
      'cited_entry_ids',
      'support',
    ]);
    assert.equal((await svc.usage(o)).deflectionsUsed, 1);
  });

  test('when the LLM says the entries do not answer and cites nothing, then confidence is 0 and nothing is counted', async () => {
    llm.replies = [
      {
        content: answer({
          answer: 'The knowledge base does not cover this.',
          answered_fully: false,
          cited_entry_ids: [],
          support: 0,
        }),
      },
    ];
    const o = org();
    const res = await svc.generate(o, QUESTION, POLICY);
    assert.equal(res.answer, 'The knowledge base does not cover this.');
    assert.equal(res.confidence, 0);
    assert.equal(res.highConfidence, false);
    assert.equal(res.answeredFully, false);
    assert.equal((await svc.usage(o)).deflectionsUsed, 0);
  });

  test('when the LLM returns malformed JSON, then the built-in answer is returned', async () => {
    llm.replies = [{ content: '{"answer": "To reset your pass' }];
    const res = await svc.generate(org(), QUESTION, POLICY);
    assert.match(res.answer, EXTRACTIVE);
    assert.equal(res.confidence, 100);
    assertShape();
  });

  test('when the LLM cites an entry it was not given, then the built-in answer is returned', async () => {
    llm.replies = [{ content: answer({ cited_entry_ids: ['kb-made-up'] }) }];
    const res = await svc.generate(org(), QUESTION, POLICY);
    assert.match(res.answer, EXTRACTIVE);
  });

  test('when the LLM answers 429 once, then the call is retried and the LLM answer used', async () => {
    llm.replies = [{ status: 429, headers: { 'retry-after-ms': '50' } }, { content: answer({}) }];
    const res = await svc.generate(org(), QUESTION, POLICY);
    assert.match(res.answer, /^To reset your password open Settings/);
    assert.equal(llm.requests.length, 2);
    assertShape();
  });

  test('when the LLM keeps answering 429, then retries stop at the limit and the built-in answer is returned', async () => {
    llm.replies = [{ status: 429, headers: { 'retry-after-ms': '10' } }];
    const res = await svc.generate(org(), QUESTION, POLICY);
    assert.match(res.answer, EXTRACTIVE);
    assert.equal(llm.requests.length, 3); // 1 + LLM_MAX_RETRIES
  });

  test('when the LLM fails with 500s, then the built-in answer is returned', async () => {
    llm.replies = [{ status: 500 }];
    const res = await svc.generate(org(), QUESTION, POLICY);
    assert.match(res.answer, EXTRACTIVE);
    assert.equal(res.highConfidence, true);
  });

  test('when the LLM does not answer within LLM_TIMEOUT_MS, then the built-in answer is returned in time', async () => {
    llm.replies = [{ content: answer({}), delayMs: 10_000 }];
    const started = Date.now();
    const res = await svc.generate(org(), QUESTION, POLICY);
    assert.match(res.answer, EXTRACTIVE);
    assert.ok(Date.now() - started < 4_000, `took ${Date.now() - started} ms`);
  });

  test('when the caller deadline is shorter than the LLM budget, then the fallback answers before the deadline', async () => {
    const slow = await startAnswers(testEnv({ ...baseEnv, LLM_TIMEOUT_MS: '30000' }));
    try {
      knowledge.kb.set('deadline', KB);
      llm.replies = [{ content: answer({}), delayMs: 10_000 }];
      const res = await callUnary(
        slow.client.generateAnswer.bind(slow.client),
        { orgId: 'deadline', question: QUESTION, policy: POLICY },
        { timeoutMs: 1_500 },
      );
      assert.match(res.answer, EXTRACTIVE);
    } finally {
      await slow.stop();
    }
  });
});

describe('labels with an LLM', () => {
  test('when the LLM labels a ticket, then ClassifyTicket returns its labels', async () => {
    llm.replies = [
      {
        content: JSON.stringify({
          category: 'bug',
          priority: 'critical',
          summary: 'Customer data is visible to other tenants',
        }),
      },
    ];
    const res = await svc.classify('I can see invoices of another company in my account!');
    assert.deepEqual(res, {
      category: 'bug',
      priority: 'critical',
      summary: 'Customer data is visible to other tenants.',
      probabilities: {},
      modelVersion: 0,
      provider: PROVIDER,
    });
    assertShape();
    const schema = (
      llm.requests[0]!.body.response_format as {
        json_schema: { schema: { properties: { category: { enum: string[] } } } };
      }
    ).json_schema.schema;
    assert.deepEqual(schema.properties.category.enum, [
      'bug',
      'feature_request',
      'documentation',
      'how_to',
      'general_question',
    ]);
  });

  test('when the LLM returns a category outside the taxonomy, then the built-in classifier labels the ticket', async () => {
    llm.replies = [
      { content: JSON.stringify({ category: 'complaint', priority: 'high', summary: 'x' }) },
    ];
    const res = await svc.classify('Please add an option to export reports to Excel.');
    assert.equal(res.category, 'feature_request');
    assert.equal(res.provider, 'builtin');
    assert.deepEqual(Object.keys(res.probabilities).sort(), [
      'bug',
      'documentation',
      'feature_request',
      'general_question',
      'how_to',
    ]);
    const sum = Object.values(res.probabilities).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-9, `probabilities sum to ${sum}`);
    assert.ok(
      res.probabilities.feature_request! > 0.5,
      `feature_request ${res.probabilities.feature_request}`,
    );
  });
});

describe('circuit breaker', () => {
  test('when the LLM failed LLM_BREAKER_FAILURES times in a row, then it is not called until the breaker closes', async () => {
    const guarded = await startAnswers(
      testEnv({
        ...baseEnv,
        LLM_MAX_RETRIES: '0',
        LLM_BREAKER_FAILURES: '2',
        LLM_BREAKER_OPEN_MS: '60000',
      }),
    );
    try {
      knowledge.kb.set('breaker', KB);
      llm.replies = [{ status: 503 }];
      for (let i = 0; i < 2; i++)
        assert.match((await guarded.generate('breaker', QUESTION, POLICY)).answer, EXTRACTIVE);
      assert.equal(llm.requests.length, 2);
      llm.replies = [{ content: answer({}) }];
      const res = await guarded.generate('breaker', QUESTION, POLICY);
      assert.match(res.answer, EXTRACTIVE, 'the open circuit skips the LLM');
      assert.equal(llm.requests.length, 2);
    } finally {
      await guarded.stop();
    }
  });
});
