// End-to-end: KB search through the gateway, with entries imported through the
// admin API into the knowledge service (embedded index).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Stack, api } from '../support/stack.js';

let stack: Stack;
let keyA: string;
let keyB: string;
let emptyKey: string;

const ENTRIES_A = [
  {
    id: 'pw-reset',
    question: 'How do I reset my password?',
    answer:
      'Open Settings > Security and choose "Reset password". We email you a link that is valid for one hour.',
  },
  {
    id: 'pw-policy',
    question: 'What are the password requirements?',
    answer:
      'Passwords need at least 12 characters. Any mix of letters, digits and symbols is accepted.',
  },
  {
    id: 'sso',
    question: 'Can we sign in with single sign-on (SAML)?',
    answer:
      'Yes. SAML single sign-on is available on the Business plan under Settings > Authentication.',
  },
  {
    id: 'export-csv',
    question: 'How do I export tickets to CSV?',
    answer: 'In the Tickets view choose Export > CSV. Large exports are emailed to you when ready.',
  },
  {
    id: 'delete-account',
    question: 'How do I delete my account?',
    answer:
      'An owner can delete the workspace from Settings > Danger zone. Data is erased after 30 days.',
  },
  {
    id: 'api-keys',
    question: 'Where do I create API keys?',
    answer:
      'Go to Settings > API keys, pick the scopes the key needs and copy it; it is shown only once.',
  },
  {
    id: 'two-factor',
    question: 'How do I turn on two-factor authentication for my password login?',
    answer: 'Settings > Security > Two-factor. Scan the QR code with an authenticator app.',
  },
  {
    id: 'invoice',
    question: 'Where can I download invoices?',
    answer: 'Billing > Invoices lists every invoice as a PDF.',
  },
];
const ENTRIES_B = [
  {
    id: 'b-secret',
    question: 'How do I reset my password on the zebrafish portal?',
    answer: 'Organization B only: call the zebrafish hotline.',
  },
];

before(async () => {
  stack = await Stack.onTestBackends('e2e-kb', {
    nats: 'shared',
    services: ['tickets', 'knowledge'],
  });
  keyA = await stack.orgWithKey('kb-a');
  keyB = await stack.orgWithKey('kb-b');
  emptyKey = await stack.orgWithKey('kb-empty');
  const a = await stack.admin<{ inserted: number }>(
    'POST',
    '/admin/v1/orgs/kb-a/kb/entries',
    ENTRIES_A,
  );
  assert.equal(a.inserted, ENTRIES_A.length);
  await stack.admin('POST', '/admin/v1/orgs/kb-b/kb/entries', ENTRIES_B);
});

after(() => stack?.stop());

const search = (key: string, query: string, extra = '') =>
  api(
    stack.baseUrl(),
    'GET',
    `/api/v1/agent/kb/search?query=${encodeURIComponent(query)}${extra}`,
    { key },
  );

test('when searching, then the best entry comes first and scores are in [0,1], descending', async () => {
  const res = await search(keyA, 'I forgot my password, how can I reset it?');
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.json), ['results']);
  const results = res.json.results as Array<{ question: string; answer: string; score: number }>;
  assert.ok(results.length >= 1);
  assert.equal(results[0]!.question, 'How do I reset my password?');
  for (const r of results) {
    assert.deepEqual(Object.keys(r).sort(), ['answer', 'question', 'score']);
    assert.ok(r.score >= 0 && r.score <= 1, `score ${r.score}`);
  }
  for (let i = 1; i < results.length; i++) assert.ok(results[i - 1]!.score >= results[i]!.score);
});

test('when limit is omitted, then at most 5 results; 1 and 20 are accepted; 0, 21 and abc are 400', async () => {
  const broad = 'how do I password account settings export keys invoices sign-on delete two-factor';
  const dflt = await search(keyA, broad);
  assert.equal(dflt.json.results.length, 5);
  assert.equal((await search(keyA, broad, '&limit=1')).json.results.length, 1);
  const twenty = await search(keyA, broad, '&limit=20');
  assert.equal(twenty.status, 200);
  assert.ok(twenty.json.results.length > 5 && twenty.json.results.length <= ENTRIES_A.length);
  for (const bad of ['0', '21', 'abc', '2.5']) {
    const res = await search(keyA, broad, `&limit=${bad}`);
    assert.equal(res.status, 400, bad);
    assert.equal(res.json.error.param, 'limit');
  }
});

test('when the organization has no KB entries, then the body is exactly {"results":[]}', async () => {
  const res = await search(emptyKey, 'How do I reset my password?');
  assert.equal(res.status, 200);
  assert.equal(res.text, '{"results":[]}');
});

test("when two organizations have entries, then neither sees the other's", async () => {
  const a = await search(keyA, 'zebrafish portal password hotline', '&limit=20');
  assert.ok(!a.text.includes('zebrafish'), 'org A never sees org B entries');
  const b = await search(keyB, 'How do I reset my password?', '&limit=20');
  assert.equal(b.json.results.length, 1);
  assert.match(b.json.results[0].answer, /Organization B only/);
});

test('when the query is 2000 code points it is accepted; 2001 or missing is 400 naming query', async () => {
  const ok = await search(keyA, 'é'.repeat(2000));
  assert.equal(ok.status, 200);
  for (const q of ['é'.repeat(2001), '', '   ']) {
    const res = await search(keyA, q);
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'invalid_request');
    assert.equal(res.json.error.param, 'query');
  }
  const missing = await api(stack.baseUrl(), 'GET', '/api/v1/agent/kb/search', { key: keyA });
  assert.equal(missing.json.error.param, 'query');
});

test('when the key lacks kb:read, then 403 insufficient_scope naming kb:read', async () => {
  const key = await stack.keyFor('kb-a', ['tickets:read']);
  const res = await search(key, 'password');
  assert.equal(res.status, 403);
  assert.match(res.headers.get('www-authenticate') ?? '', /scope="kb:read"/);
});

test('when the same search goes to both prefixes, then the bodies are byte-identical', async () => {
  const q = `query=${encodeURIComponent('export csv')}&limit=3`;
  const v1 = await api(stack.baseUrl(), 'GET', `/api/v1/agent/kb/search?${q}`, { key: keyA });
  const plain = await api(stack.baseUrl(), 'GET', `/api/agent/kb/search?${q}`, { key: keyA });
  assert.equal(v1.text, plain.text);
  assert.equal(v1.json.results[0].question, 'How do I export tickets to CSV?');
});

test('when an entry is deleted or re-imported, then search reflects it', async () => {
  const upd = await stack.admin<{ inserted: number; updated: number }>(
    'POST',
    '/admin/v1/orgs/kb-a/kb/entries',
    [
      {
        id: 'invoice',
        question: 'Where can I download invoices?',
        answer: 'Billing > Invoices, as PDF or CSV.',
      },
    ],
  );
  assert.deepEqual([upd.inserted, upd.updated], [0, 1]);
  const after = await search(keyA, 'download invoices');
  assert.equal(after.json.results[0].answer, 'Billing > Invoices, as PDF or CSV.');
  await stack.admin('DELETE', '/admin/v1/orgs/kb-a/kb/entries/invoice');
  const gone = await search(keyA, 'download invoices', '&limit=20');
  assert.ok(!gone.text.includes('Billing > Invoices'));
});
