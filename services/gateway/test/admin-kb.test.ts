// Admin routes for the knowledge, digest and answers services (real MariaDB and Redis, canned
// gRPC upstreams that record every request).
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import { KB_UPSERT_BATCH } from '../src/domain/kb-import.js';
import {
  DIGEST_BUSY_WEEK,
  NOT_A_MONDAY,
  REJECTED_QUESTION,
  type FakeUpstreams,
} from './support/fake-upstreams.js';
import {
  admin,
  assertError,
  createOrg,
  type GatewayBackends,
  type HttpResult,
  request,
  startGateway,
  startGatewayBackends,
  type TestGateway,
} from './support/gateway.js';
import { stopAll } from '../../../test/support/testing.js';

let backends: GatewayBackends;
let upstreams: FakeUpstreams;
let gw: TestGateway;

const newOrg = () => createOrg(gw, 'kb');

/** POSTs a raw import body with the given Content-Type. */
function importRaw(orgId: string, body: string, contentType: string): Promise<HttpResult> {
  return request(`${gw.adminBase}/admin/v1/orgs/${orgId}/kb/entries`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.handle.adminToken}`, 'content-type': contentType },
    body,
  });
}

const entry = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  question: `How does ${id} work?`,
  answer: `Like ${id}.`,
  ...extra,
});

before(async () => {
  backends = await startGatewayBackends('gwkb');
  upstreams = backends.upstreams;
  gw = await startGateway(backends.env);
});

after(() => stopAll(gw, backends));

beforeEach(() => {
  upstreams.reset();
  upstreams.upsertError = undefined;
});

describe('KB import', () => {
  it('when the gateway is not embedded, then there is no demo organization and no demo KB load', async () => {
    assert.equal(gw.handle.demo, undefined);
    assert.equal(gw.handle.demoKb, undefined);
  });

  it('when a JSON array is posted, then valid rows are upserted and invalid ones reported by 1-based index', async () => {
    const org = await newOrg();
    const res = await admin(gw, 'POST', `/orgs/${org}/kb/entries`, [
      entry('a', { tags: ['billing', ' billing ', 'sso'] }),
      { id: 'b', question: 'Missing answer?' },
      entry('c'),
      'not an object',
      entry('bad id!'),
      entry('d', { question: REJECTED_QUESTION }),
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      inserted: 2,
      updated: 0,
      failed: [
        { line: 2, message: 'answer is required' },
        { line: 4, message: 'entry must be a JSON object' },
        {
          line: 5,
          message:
            "id may hold only letters, digits, '.', '_', ':' and '-', starting with a letter or digit",
        },
        { line: 6, message: 'question was refused by the knowledge service' },
      ],
    });
    assert.equal(upstreams.calls.upsertEntries.length, 1);
    const sent = upstreams.calls.upsertEntries[0]!;
    assert.equal(sent.orgId, org);
    assert.deepEqual(
      sent.entries.map((e) => e.id),
      ['a', 'c', 'd'],
    );
    assert.deepEqual(sent.entries[0]!.tags, ['billing', 'sso']);
    assert.equal(upstreams.requestIds.at(-1), res.headers.get('x-request-id'));
  });

  it('when JSON lines are posted (any of the three types), then failures carry the line number', async () => {
    const org = await newOrg();
    const body = [
      JSON.stringify(entry('l1')),
      '',
      '{"id": "l3", "question": "q"', // truncated
      JSON.stringify(entry('l4', { tags: 'a|b' })),
      '   ',
      JSON.stringify(entry('l6')),
    ].join('\r\n');
    for (const type of ['application/x-ndjson', 'application/jsonl', 'text/plain; charset=utf-8']) {
      const res = await importRaw(org, body, type);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.failed, [
        { line: 3, message: 'not valid JSON' },
        { line: 4, message: 'tags must be an array of strings' },
      ]);
    }
    assert.deepEqual(
      upstreams.calls.upsertEntries.map((c) => [c.entries.length]),
      [[2], [2], [2]],
    );
  });

  it('when more rows than a batch are posted, then they go in batches of KB_UPSERT_BATCH and failures map back to their lines', async () => {
    const org = await newOrg();
    const lines: string[] = [];
    for (let i = 0; i < 600; i++) {
      const question = i === 260 || i === 599 ? REJECTED_QUESTION : `Question ${i}?`;
      lines.push(JSON.stringify({ id: `e${i}`, question, answer: `Answer ${i}.` }));
      if (i % 100 === 0) lines.push(''); // blank lines shift line numbers away from indexes
    }
    const res = await importRaw(org, lines.join('\n'), 'application/x-ndjson');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      upstreams.calls.upsertEntries.map((c) => c.entries.length),
      [
        ...Array<number>(Math.floor(600 / KB_UPSERT_BATCH)).fill(KB_UPSERT_BATCH),
        600 % KB_UPSERT_BATCH,
      ],
    );
    const lineOf = (id: string) => lines.findIndex((l) => l.includes(`"id":"${id}"`)) + 1;
    assert.deepEqual(res.json, {
      inserted: 598,
      updated: 0,
      failed: [
        { line: lineOf('e260'), message: 'question was refused by the knowledge service' },
        { line: lineOf('e599'), message: 'question was refused by the knowledge service' },
      ],
    });
    assert.equal(lineOf('e260'), 264);
    assert.equal(upstreams.kb.get(org)?.size, 598);
  });

  it('when an id repeats in one request, then the last row wins and is counted once', async () => {
    const org = await newOrg();
    const res = await admin(gw, 'POST', `/orgs/${org}/kb/entries`, [
      entry('dup', { answer: 'first' }),
      entry('other'),
      entry('dup', { answer: 'last' }),
    ]);
    assert.deepEqual(res.json, { inserted: 2, updated: 0, failed: [] });
    assert.equal(upstreams.kb.get(org)?.get('dup')?.answer, 'last');
    assert.equal(upstreams.calls.upsertEntries[0]!.entries.length, 2);
  });

  it('when the same entries are imported again, then they are reported as updated', async () => {
    const org = await newOrg();
    const rows = [entry('x'), entry('y'), entry('z')];
    assert.deepEqual((await admin(gw, 'POST', `/orgs/${org}/kb/entries`, rows)).json, {
      inserted: 3,
      updated: 0,
      failed: [],
    });
    assert.deepEqual((await admin(gw, 'POST', `/orgs/${org}/kb/entries`, rows)).json, {
      inserted: 0,
      updated: 3,
      failed: [],
    });
  });

  it('when the body is empty, not an array, malformed or of another type, then 400 without calling knowledge', async () => {
    const org = await newOrg();
    assertError(await importRaw(org, '', 'application/json'), 400, 'invalid_request');
    assertError(await importRaw(org, '\n \n', 'application/x-ndjson'), 400, 'invalid_request');
    assertError(await importRaw(org, '[]', 'application/json'), 400, 'invalid_request');
    const notArray = await importRaw(org, JSON.stringify(entry('a')), 'application/json');
    assertError(notArray, 400, 'invalid_request');
    assert.match(notArray.json.error.message, /JSON array/);
    assertError(await importRaw(org, '[{"id":', 'application/json'), 400, 'invalid_request');
    assertError(
      await importRaw(org, '[]', 'application/xml'),
      400,
      'invalid_request',
      'Content-Type',
    );
    const none = await request(`${gw.adminBase}/admin/v1/orgs/${org}/kb/entries`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.handle.adminToken}` },
    });
    assertError(none, 400, 'invalid_request', 'Content-Type');
    const latin1 = await importRaw(org, '[]', 'application/json; charset=latin1');
    assertError(latin1, 400, 'invalid_request', 'Content-Type');
    assert.match(latin1.json.error.message, /UTF-8/);
    assert.equal(upstreams.calls.upsertEntries.length, 0);
  });

  it('when the body is gzip-compressed, then it is inflated; when it is not UTF-8, then 400 and nothing is written', async () => {
    const org = await newOrg();
    const post = (body: Buffer, headers: Record<string, string> = {}) =>
      fetch(`${gw.adminBase}/admin/v1/orgs/${org}/kb/entries`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${gw.handle.adminToken}`,
          'content-type': 'application/x-ndjson',
          ...headers,
        },
        body,
      });
    // Multi-byte characters over several inflated chunks: some are cut between two chunks.
    const answer = 'é😀'.repeat(4000);
    const ids = ['z1', 'z2', 'z3', 'z4'];
    const lines = ids.map((id) => `${JSON.stringify(entry(id, { answer }))}\n`).join('');
    const gzipped = await post(gzipSync(Buffer.from(lines)), { 'content-encoding': 'gzip' });
    assert.equal(gzipped.status, 200, await gzipped.clone().text());
    assert.equal(((await gzipped.json()) as { inserted: number }).inserted, 4);
    assert.deepEqual(
      upstreams.calls.upsertEntries.at(-1)!.entries.map((e) => e.answer === answer),
      [true, true, true, true],
    );
    const calls = upstreams.calls.upsertEntries.length;
    // A multi-byte character cut by an invalid byte, inside an otherwise valid line.
    const bad = Buffer.concat([
      Buffer.from('{"id":"x","question":"caf'),
      Buffer.from([0xc3, 0x28]),
    ]);
    const refused = await post(Buffer.concat([bad, Buffer.from('?","answer":"a"}\n')]));
    assert.equal(refused.status, 400);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'invalid_request');
    assert.match(body.error.message, /UTF-8/);
    assert.equal(upstreams.calls.upsertEntries.length, calls);
  });

  it('when the body is over 10 MiB, then 413 payload_too_large', async () => {
    const org = await newOrg();
    const line = JSON.stringify(entry('big', { answer: 'x'.repeat(9_000) }));
    const body = `${line}\n`.repeat(Math.ceil((10 * 1024 * 1024 + 1) / (line.length + 1)));
    const res = await importRaw(org, body, 'application/x-ndjson');
    assertError(res, 413, 'payload_too_large');
    assert.match(res.json.error.message, /10 MiB/);
  });

  it('when the organization is unknown, then 404 and knowledge is not called', async () => {
    assertError(
      await admin(gw, 'POST', '/orgs/no-such-org/kb/entries', [entry('a')]),
      404,
      'not_found',
    );
    assert.equal(upstreams.calls.upsertEntries.length, 0);
  });

  it('when the knowledge service is unavailable, then 503 with Retry-After', async () => {
    const org = await newOrg();
    upstreams.upsertError = new AppError('service_unavailable', 'index down');
    const res = await admin(gw, 'POST', `/orgs/${org}/kb/entries`, [entry('a')]);
    assertError(res, 503, 'service_unavailable');
    assert.ok(res.headers.get('retry-after'));
  });

  it('when the admin token is missing, then 401 before anything is read', async () => {
    const res = await request(`${gw.adminBase}/admin/v1/orgs/x/kb/entries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[]',
    });
    assertError(res, 401, 'unauthorized');
  });
});

describe('KB delete and count', () => {
  it('when entries are counted and deleted, then count follows and a missing entry gives 404', async () => {
    const org = await newOrg();
    await admin(gw, 'POST', `/orgs/${org}/kb/entries`, [entry('a'), entry('count'), entry('c')]);
    assert.deepEqual((await admin(gw, 'GET', `/orgs/${org}/kb/entries/count`)).json, { count: 3 });

    const del = await admin(gw, 'DELETE', `/orgs/${org}/kb/entries/a`);
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.deepEqual(upstreams.calls.deleteEntries.at(-1), { orgId: org, ids: ['a'] });
    assertError(await admin(gw, 'DELETE', `/orgs/${org}/kb/entries/a`), 404, 'not_found');
    // An entry may be called "count": DELETE still reaches it.
    assert.equal((await admin(gw, 'DELETE', `/orgs/${org}/kb/entries/count`)).status, 204);
    assert.deepEqual((await admin(gw, 'GET', `/orgs/${org}/kb/entries/count`)).json, { count: 1 });
  });

  it('when the organization is unknown or the id invalid, then 404 / 400 without calling knowledge', async () => {
    assertError(await admin(gw, 'GET', '/orgs/no-such-org/kb/entries/count'), 404, 'not_found');
    assertError(await admin(gw, 'DELETE', '/orgs/no-such-org/kb/entries/a'), 404, 'not_found');
    const org = await newOrg();
    assertError(
      await admin(gw, 'DELETE', `/orgs/${org}/kb/entries/${encodeURIComponent('a b')}`),
      400,
      'invalid_request',
      'id',
    );
    assert.equal(upstreams.calls.deleteEntries.length + upstreams.calls.countEntries.length, 0);
  });

  it('when the method is wrong, then 405 with Allow', async () => {
    const org = await newOrg();
    const cases: Array<[string, string, string]> = [
      ['GET', `/orgs/${org}/kb/entries`, 'POST'],
      ['GET', `/orgs/${org}/kb/entries/a`, 'DELETE'],
      ['POST', `/orgs/${org}/kb/entries/count`, 'GET, HEAD, DELETE'],
      ['GET', `/orgs/${org}/digests`, 'POST'],
      ['POST', `/orgs/${org}/usage`, 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await admin(gw, method, path);
      assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
    }
  });
});

describe('digest build', () => {
  it('when a digest is built, then the service result is returned and week_start passed on', async () => {
    const org = await newOrg();
    const res = await admin(gw, 'POST', `/orgs/${org}/digests`, { week_start: '2026-11-02' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      org_id: org,
      week_start: '2026-11-02',
      week_end: '2026-11-08',
      ticket_count: 3,
      content: res.json.content,
      generated_at: '2026-11-16T06:00:00.000Z',
    });
    assert.match(res.json.content, /^# FAQ digest 2026-11-02/);
    assert.deepEqual(upstreams.calls.buildDigest.at(-1), { orgId: org, weekStart: '2026-11-02' });
  });

  it('when the latest digest is asked for, then 404 before any build, the built digest after, and 405 for other methods', async () => {
    const org = await newOrg();
    assertError(await admin(gw, 'GET', `/orgs/${org}/digests/latest`), 404, 'not_found');
    const built = await admin(gw, 'POST', `/orgs/${org}/digests`, { week_start: '2026-11-02' });
    const latest = await admin(gw, 'GET', `/orgs/${org}/digests/latest`);
    assert.equal(latest.status, 200, latest.text);
    assert.deepEqual(latest.json, built.json);
    assert.deepEqual(upstreams.calls.getLatestDigest.at(-1), {
      orgId: org,
      withoutSummary: undefined,
    });
    const wrong = await admin(gw, 'POST', `/orgs/${org}/digests/latest`);
    assertError(wrong, 405, 'method_not_allowed');
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
    assertError(await admin(gw, 'GET', '/orgs/no-such-org/digests/latest'), 404, 'not_found');
  });

  it('when no week is given (empty object or no body at all), then the service picks the default', async () => {
    const org = await newOrg();
    assert.equal((await admin(gw, 'POST', `/orgs/${org}/digests`, {})).status, 200);
    const noBody = await request(`${gw.adminBase}/admin/v1/orgs/${org}/digests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.handle.adminToken}` },
    });
    assert.equal(noBody.status, 200, noBody.text);
    assert.equal(noBody.json.week_start, '2026-11-09');
    assert.deepEqual(
      upstreams.calls.buildDigest.map((c) => [c.orgId, c.weekStart]),
      [
        [org, undefined],
        [org, undefined],
      ],
    );
  });

  it('when week_start is malformed, then 400 here; when the service refuses it, then its 400 passes through', async () => {
    const org = await newOrg();
    for (const week_start of ['2026-1-1', 20261102, 'next monday']) {
      assertError(
        await admin(gw, 'POST', `/orgs/${org}/digests`, { week_start }),
        400,
        'invalid_request',
        'week_start',
      );
    }
    assert.equal(upstreams.calls.buildDigest.length, 0);
    const refused = await admin(gw, 'POST', `/orgs/${org}/digests`, { week_start: NOT_A_MONDAY });
    assertError(refused, 400, 'invalid_request', 'week_start');
    assert.equal(
      refused.json.error.message,
      'week_start must be a Monday (ISO weeks start on Monday)',
    );
    assertError(await admin(gw, 'POST', `/orgs/${org}/digests`, [1]), 400, 'invalid_request');
  });

  it('when the digest service is unavailable or the organization unknown, then 503 / 404', async () => {
    const org = await newOrg();
    const busy = await admin(gw, 'POST', `/orgs/${org}/digests`, { week_start: DIGEST_BUSY_WEEK });
    assertError(busy, 503, 'service_unavailable');
    assert.ok(busy.headers.get('retry-after'));
    assertError(await admin(gw, 'POST', '/orgs/no-such-org/digests', {}), 404, 'not_found');
  });
});

describe('usage', () => {
  it("when usage is asked, then the organization's own deflection limit is passed to answers", async () => {
    const org = await newOrg();
    await admin(gw, 'PATCH', `/orgs/${org}/settings`, { deflection_monthly_limit: 250 });
    upstreams.deflectionsUsed.set(org, 17);
    const res = await admin(gw, 'GET', `/orgs/${org}/usage`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { month: '2026-11', deflections_used: 17, deflection_limit: 250 });
    assert.deepEqual(upstreams.calls.getUsage.at(-1), {
      orgId: org,
      deflectionMonthlyLimit: 250,
    });
    assertError(await admin(gw, 'GET', '/orgs/no-such-org/usage'), 404, 'not_found');
  });
});
