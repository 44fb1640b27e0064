// End-to-end: an organization's own triage through the admin API and the public API, every
// service its own process on MariaDB and NATS: categories, streamed uploads (a bad one refused
// naming the line, nothing added), a training run, tickets triaged into the organization's own
// categories, the list filter, a person's correction joining the training set, rollback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Stack, api, waitFor } from '../support/stack.js';

let stack: Stack;

before(async () => {
  stack = await Stack.onTestBackends('e2e-org-triage', {
    env: { DIGEST_METRICS_PORT: '0', TRIAGE_MODEL_REFRESH_MS: '500', TRIAGE_TRAINING_NICE: '0' },
  });
});

after(() => stack?.stop());

/** An admin call with a raw body (uploads) or none; returns status and parsed JSON. */
async function adminRaw(
  method: string,
  path: string,
  body?: string,
  type = 'application/x-ndjson',
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${stack.adminUrl()}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.adminToken}`,
      ...(body !== undefined ? { 'content-type': type } : {}),
    },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const BILLING = ['invoice', 'refund', 'charged twice', 'receipt', 'payment failed', 'billing'];
const ACCESS = ['password', 'login', 'sign in', 'two-factor code', 'locked out', 'SSO'];

/** Both labels in the same sentences, told apart by their topic words only. */
function rows(n: number): { title: string; body: string; label: string }[] {
  const out = [];
  for (let i = 0; i < n; i++)
    for (const [label, words] of [
      ['billing', BILLING],
      ['access', ACCESS],
    ] as const)
      out.push({
        title: `Problem with the ${words[i % 6]}`,
        body: `Hello, the ${words[(i + 1) % 6]} on my account looks wrong since the ${words[(i + 3) % 6]} change (${i}).`,
        label,
      });
  return out;
}

const counts = async (org: string) =>
  (
    (await adminRaw('GET', `/orgs/${org}/triage`)).json.examples as {
      category: string;
      uploaded: number;
      corrections: number;
    }[]
  ).map((e) => [e.category, e.uploaded, e.corrections]);

test('when an organization uploads labelled tickets and trains, then its new tickets get its own categories', async () => {
  const org = 'acme-triage';
  const key = await stack.orgWithKey(org);
  const put = await adminRaw(
    'PUT',
    `/orgs/${org}/triage/categories`,
    JSON.stringify({ categories: ['billing', 'access'] }),
    'application/json',
  );
  assert.equal(put.status, 200, JSON.stringify(put.json));

  // A CSV whose third record has a label outside the categories: refused, nothing added.
  const csv =
    'title,body,label\nRefund,Where is my refund?,billing\nLogin,Cannot sign in,access\nOops,Wrong one,Billing\n';
  const bad = await adminRaw('POST', `/orgs/${org}/triage/examples`, csv, 'text/csv');
  assert.equal(bad.status, 400);
  assert.match(
    String((bad.json.error as { message: string }).message),
    /line 4: label "Billing" is not one of the organization's categories \(billing, access\)/,
  );
  assert.deepEqual(await counts(org), [
    ['billing', 0, 0],
    ['access', 0, 0],
  ]);
  const notJson = await adminRaw(
    'POST',
    `/orgs/${org}/triage/examples`,
    '{"text":"a","label":"billing"}\n{oops\n',
  );
  assert.equal(notJson.status, 400);
  assert.match(
    String((notJson.json.error as { message: string }).message),
    /line 2: not valid JSON/,
  );

  const upload = await adminRaw(
    'POST',
    `/orgs/${org}/triage/examples`,
    rows(20)
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  assert.equal(upload.status, 200, JSON.stringify(upload.json));
  assert.deepEqual([upload.json.added, upload.json.updated], [40, 0]);

  const started = await adminRaw(
    'POST',
    `/orgs/${org}/triage/training`,
    JSON.stringify({ activate: true }),
    'application/json',
  );
  assert.equal(started.status, 202, JSON.stringify(started.json));
  let job = started.json;
  await waitFor(async () => {
    job = (await adminRaw('GET', `/orgs/${org}/triage/training/${String(started.json.id)}`)).json;
    return job.state === 'succeeded' || job.state === 'failed';
  }, 300_000);
  assert.equal(job.state, 'succeeded', String(job.error));
  assert.equal(job.version, 1);
  assert.equal(job.activated, true);
  const report = job.report as { categories: { category: string }[]; macro_f1: number };
  assert.deepEqual(
    report.categories.map((c) => c.category),
    ['billing', 'access'],
  );

  // Within the refresh, new tickets are triaged into the organization's own categories.
  await new Promise((r) => setTimeout(r, 1_500));
  const created = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'Problem with my refund\n\nThe invoice on my account was charged twice.' },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.ticket_id as number;
  let listed: { id: number; category: string | null }[] = [];
  await waitFor(async () => {
    const res = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets', { key });
    return (res.json.tickets as typeof listed).some((t) => t.id === id && t.category !== null);
  }, 30_000);
  await waitFor(async () => {
    const res = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?category=billing', {
      key,
    });
    listed = res.json.tickets as typeof listed;
    return listed.some((t) => t.id === id);
  }, 30_000);
  assert.equal(listed.find((t) => t.id === id)!.category, 'billing');

  // A person's correction: the ticket's category changes and the label joins the training set.
  const patched = await adminRaw(
    'PATCH',
    `/orgs/${org}/tickets/${id}`,
    JSON.stringify({ category: 'access' }),
    'application/json',
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.json));
  assert.equal(patched.json.category, 'access');
  const refused = await adminRaw(
    'PATCH',
    `/orgs/${org}/tickets/${id}`,
    JSON.stringify({ category: 'shipping' }),
    'application/json',
  );
  assert.equal(refused.status, 400);
  await waitFor(
    async () => (await counts(org)).some(([c, , n]) => c === 'access' && n === 1),
    30_000,
  );

  // Back to the built-in classifier, then rolled back to version 1.
  const builtin = await adminRaw('POST', `/orgs/${org}/triage/versions/builtin/activate`);
  assert.equal(builtin.json.active_version, 'builtin');
  const back = await adminRaw('POST', `/orgs/${org}/triage/rollback`);
  assert.equal(back.json.active_version, 1);
  const versions = await adminRaw('GET', `/orgs/${org}/triage/versions`);
  assert.deepEqual(
    (versions.json.versions as { version: number; active: boolean }[]).map((v) => [
      v.version,
      v.active,
    ]),
    [[1, true]],
  );
});

test('when a public list filter names a category, then any name of the form is accepted and a malformed one is 400', async () => {
  const key = await stack.orgWithKey('filter-triage');
  const ok = await api(
    stack.baseUrl(),
    'GET',
    '/api/v1/agent/tickets?category=Billing%20%26%20Payments',
    { key },
  );
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.json.tickets, []);
  const bad = await api(stack.baseUrl(), 'GET', '/api/v1/agent/tickets?category=bug%21', { key });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, 'category');
});
