// Admin API (separate listener) against real MariaDB and Redis with a canned tickets upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstreams } from './support/fake-upstreams.js';
import {
  admin,
  assertError,
  createOrg,
  type GatewayBackends,
  request,
  startGateway,
  startGatewayBackends,
  type TestGateway,
  uniqueSlug,
} from './support/gateway.js';
import { stopAll } from '../../../test/support/testing.js';

let backends: GatewayBackends;
let upstreams: FakeUpstreams;
let gw: TestGateway;

const newOrg = () => createOrg(gw, 'adm');

before(async () => {
  backends = await startGatewayBackends('gwadm');
  upstreams = backends.upstreams;
  gw = await startGateway(backends.env);
});

after(() => stopAll(gw, backends));

describe('admin authentication', () => {
  it('when the admin token is missing or wrong, then 401 with the JSON error body', async () => {
    const variants: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Basic ${gw.handle.adminToken}` },
    ];
    for (const headers of variants) {
      const res = await request(`${gw.adminBase}/admin/v1/orgs`, { headers });
      assertError(res, 401, 'unauthorized');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
    }
  });

  it('when an API key is used on the admin API, then 401', async () => {
    const id = await newOrg();
    const key = (await admin(gw, 'POST', `/orgs/${id}/keys`, { scopes: ['kb:read'] })).json
      .key as string;
    assertError(await request(`${gw.adminBase}/admin/v1/orgs`, { key }), 401, 'unauthorized');
  });

  it('when the path is unknown or the method wrong, then 404 / 405 with Allow, as JSON', async () => {
    assertError(await request(`${gw.adminBase}/nope`), 404, 'not_found');
    assertError(await admin(gw, 'GET', '/orgs/x/keys/y'), 405, 'method_not_allowed');
    const res = await admin(gw, 'DELETE', '/orgs');
    assertError(res, 405, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), 'GET, HEAD, POST');
  });
});

describe('organizations and settings', () => {
  it('when an organization is created with a slug, then 201 {id, name}; the same slug again gives 409', async () => {
    const id = uniqueSlug('acme');
    const res = await admin(gw, 'POST', '/orgs', { name: '  Acme Inc  ', id });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, { id, name: 'Acme Inc' });
    assertError(await admin(gw, 'POST', '/orgs', { name: 'Other', id }), 409, 'conflict');
  });

  it('when no id is given, then one like org_… is generated', async () => {
    const res = await admin(gw, 'POST', '/orgs', { name: 'Generated' });
    assert.equal(res.status, 201);
    assert.match(res.json.id, /^org_[a-z0-9]{16}$/);
  });

  it('when the name or slug is invalid, then 400 naming the field', async () => {
    assertError(await admin(gw, 'POST', '/orgs', {}), 400, 'invalid_request', 'name');
    assertError(await admin(gw, 'POST', '/orgs', { name: '   ' }), 400, 'invalid_request', 'name');
    assertError(
      await admin(gw, 'POST', '/orgs', { name: 'x'.repeat(201) }),
      400,
      'invalid_request',
      'name',
    );
    for (const id of ['A-upper', '-lead', 'x', 'under_score', 'a'.repeat(64), 5]) {
      assertError(
        await admin(gw, 'POST', '/orgs', { name: 'n', id }),
        400,
        'invalid_request',
        'id',
      );
    }
    assertError(await admin(gw, 'POST', '/orgs', '{oops'), 400, 'invalid_request');
  });

  it('when organizations are listed, then each has id, name, created_at and its settings', async () => {
    const id = await newOrg();
    const res = await admin(gw, 'GET', '/orgs');
    assert.equal(res.status, 200);
    const org = (res.json.orgs as Array<Record<string, unknown>>).find((o) => o.id === id);
    assert.ok(org);
    assert.match(String(org.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(
      { ...(org.settings as object), updated_at: undefined },
      {
        rate_limit_per_key_per_min: 600,
        rate_limit_per_org_per_min: 3000,
        deflection_monthly_limit: 1000,
        high_confidence_threshold: 85,
        updated_at: undefined,
      },
    );
  });

  it('when settings are patched, then the given ones change and the settings are returned', async () => {
    const id = await newOrg();
    const res = await admin(gw, 'PATCH', `/orgs/${id}/settings`, {
      rate_limit_per_key_per_min: 10,
      high_confidence_threshold: 0,
    });
    assert.equal(res.status, 200);
    assert.equal(res.json.rate_limit_per_key_per_min, 10);
    assert.equal(res.json.rate_limit_per_org_per_min, 3000);
    assert.equal(res.json.high_confidence_threshold, 0);
    const again = await admin(gw, 'PATCH', `/orgs/${id}/settings`, {
      deflection_monthly_limit: 7,
      high_confidence_threshold: 100,
    });
    assert.equal(again.json.rate_limit_per_key_per_min, 10);
    assert.equal(again.json.deflection_monthly_limit, 7);
    assert.equal(again.json.high_confidence_threshold, 100);
  });

  it('when an organization is created or its settings change, then its answer policy is pushed to answers', async () => {
    const id = await newOrg();
    const pushes = () =>
      upstreams.calls.setOrgPolicy.filter((c) => c.orgId === id).map((c) => c.policy);
    assert.deepEqual(pushes(), [{ deflectionMonthlyLimit: 1000, highConfidenceThreshold: 85 }]);
    await admin(gw, 'PATCH', `/orgs/${id}/settings`, {
      deflection_monthly_limit: 3,
      high_confidence_threshold: 60,
    });
    await admin(gw, 'PATCH', `/orgs/${id}/settings`, { rate_limit_per_key_per_min: 3 });
    assert.deepEqual(pushes().slice(1), [
      { deflectionMonthlyLimit: 3, highConfidenceThreshold: 60 },
      { deflectionMonthlyLimit: 3, highConfidenceThreshold: 60 },
    ]);
  });

  it('when a setting is not a positive integer (threshold 0-100), then 400 naming it', async () => {
    const id = await newOrg();
    const bad: Array<[string, unknown]> = [
      ['rate_limit_per_key_per_min', 0],
      ['rate_limit_per_key_per_min', -1],
      ['rate_limit_per_org_per_min', 1.5],
      ['deflection_monthly_limit', '10'],
      ['high_confidence_threshold', 101],
      ['high_confidence_threshold', -1],
    ];
    for (const [field, value] of bad) {
      assertError(
        await admin(gw, 'PATCH', `/orgs/${id}/settings`, { [field]: value }),
        400,
        'invalid_request',
        field,
      );
    }
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/settings`, { unknown_field: 1 }),
      400,
      'invalid_request',
    );
  });

  it('when the organization does not exist, then 404 not_found', async () => {
    assertError(
      await admin(gw, 'PATCH', '/orgs/no-such-org/settings', { rate_limit_per_key_per_min: 5 }),
      404,
      'not_found',
    );
    assertError(await admin(gw, 'GET', '/orgs/no-such-org/keys'), 404, 'not_found');
    assertError(
      await admin(gw, 'POST', '/orgs/no-such-org/keys', { scopes: ['kb:read'] }),
      404,
      'not_found',
    );
    assertError(await admin(gw, 'DELETE', '/orgs/no-such-org/keys/key_x'), 404, 'not_found');
  });
});

describe('API keys', () => {
  it('when a key is created, then 201 {id, key, scopes} and the key works; listing never shows it', async () => {
    const id = await newOrg();
    const res = await admin(gw, 'POST', `/orgs/${id}/keys`, {
      name: 'bot',
      scopes: ['tickets:read', 'kb:read', 'kb:read'],
    });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.json).sort(), ['id', 'key', 'scopes']);
    assert.match(res.json.id, /^key_[a-z0-9]+$/);
    assert.ok(res.json.id.length <= 40);
    assert.match(res.json.key, /^sak_live_[0-9A-Za-z]{38}$/);
    assert.deepEqual(res.json.scopes, ['kb:read', 'tickets:read']);

    const works = await request(`${gw.base}/api/v1/agent/kb/search?query=x`, { key: res.json.key });
    assert.equal(works.status, 200);

    const list = await admin(gw, 'GET', `/orgs/${id}/keys`);
    assert.deepEqual(list.json.keys, [
      {
        id: res.json.id,
        name: 'bot',
        scopes: ['kb:read', 'tickets:read'],
        prefix: res.json.key.slice(0, 12),
        created_at: list.json.keys[0].created_at,
        revoked_at: null,
      },
    ]);
    assert.doesNotMatch(list.text, new RegExp(res.json.key));
  });

  it('when the scopes are missing, empty or unknown, then 400 naming scopes', async () => {
    const id = await newOrg();
    for (const body of [
      {},
      { scopes: [] },
      { scopes: ['admin'] },
      { scopes: 'kb:read' },
      { scopes: ['kb:read', 5] },
    ]) {
      assertError(
        await admin(gw, 'POST', `/orgs/${id}/keys`, body),
        400,
        'invalid_request',
        'scopes',
      );
    }
  });

  it('when a key is revoked, then 204, it stops working, and revoked_at is listed; repeating is harmless', async () => {
    const id = await newOrg();
    const created = await admin(gw, 'POST', `/orgs/${id}/keys`, { scopes: ['kb:read'] });
    const res = await admin(gw, 'DELETE', `/orgs/${id}/keys/${created.json.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    await new Promise((r) => setTimeout(r, 600)); // past the key cache TTL
    const rejected = await request(`${gw.base}/api/v1/agent/kb/search?query=x`, {
      key: created.json.key,
    });
    assert.equal(rejected.status, 401);
    const list = await admin(gw, 'GET', `/orgs/${id}/keys`);
    const revokedAt = list.json.keys[0].revoked_at;
    assert.match(revokedAt, /Z$/);
    assert.equal((await admin(gw, 'DELETE', `/orgs/${id}/keys/${created.json.id}`)).status, 204);
    assert.equal((await admin(gw, 'GET', `/orgs/${id}/keys`)).json.keys[0].revoked_at, revokedAt);
  });

  it('when a key id is unknown or belongs to another organization, then 404', async () => {
    const [one, two] = [await newOrg(), await newOrg()];
    const created = await admin(gw, 'POST', `/orgs/${one}/keys`, { scopes: ['kb:read'] });
    assertError(
      await admin(gw, 'DELETE', `/orgs/${two}/keys/${created.json.id}`),
      404,
      'not_found',
    );
    assertError(await admin(gw, 'DELETE', `/orgs/${one}/keys/key_nope`), 404, 'not_found');
  });
});

describe('ticket status', () => {
  it('when a status change is allowed, then the ticket is returned', async () => {
    const id = await newOrg();
    upstreams.reset();
    const res = await admin(gw, 'PATCH', `/orgs/${id}/tickets/42`, { status: 'in_progress' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.id, 42);
    assert.equal(res.json.status, 'in_progress');
    assert.equal(res.json.category, 'bug');
    assert.equal(typeof res.json.created_at, 'string');
    assert.deepEqual(upstreams.calls.updateTicketStatus[0], {
      orgId: id,
      ticketId: 42,
      status: 'in_progress',
    });
  });

  it('when the transition is forbidden, then 409 conflict; an unknown ticket gives 404', async () => {
    const id = await newOrg();
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/tickets/42`, { status: 'closed' }),
      409,
      'conflict',
    );
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/tickets/404`, { status: 'open' }),
      404,
      'not_found',
    );
  });

  it('when the status, ticket id or organization is invalid, then 400/404 without calling tickets', async () => {
    const id = await newOrg();
    upstreams.reset();
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/tickets/42`, { status: 'done' }),
      400,
      'invalid_request',
      'status',
    );
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/tickets/42`, {}),
      400,
      'invalid_request',
      'status',
    );
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/tickets/abc`, { status: 'open' }),
      400,
      'invalid_request',
      'id',
    );
    assertError(
      await admin(gw, 'PATCH', `/orgs/${id}/tickets/0`, { status: 'open' }),
      400,
      'invalid_request',
      'id',
    );
    assertError(
      await admin(gw, 'PATCH', '/orgs/no-such-org/tickets/42', { status: 'open' }),
      404,
      'not_found',
    );
    assert.equal(upstreams.calls.updateTicketStatus.length, 0);
  });
});
