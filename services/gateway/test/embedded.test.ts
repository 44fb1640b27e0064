// Embedded mode (`npm start` without backend URLs): JSONL store under DATA_DIR, generated admin
// token, demo bootstrap on first start only, in-memory rate limits. No MySQL/Redis needed.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '@support-agent/shared';
import { loadGatewayConfig } from '../src/config.js';
import { EmbeddedGatewayStore } from '../src/data-access/embedded-store.js';
import { bootstrapDemo, OrgAdmin } from '../src/domain/orgs.js';
import { startFakeUpstreams, type FakeUpstreams } from './support/fake-upstreams.js';
import { admin, request, startGateway } from './support/gateway.js';

let upstreams: FakeUpstreams;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-embedded-'));
  dirs.push(dir);
  return dir;
};
const embeddedEnv = (dataDir: string) => ({
  EMBEDDED: 'true',
  DATA_DIR: dataDir,
  ADMIN_TOKEN: undefined,
  UPSTREAM: upstreams.address,
});

before(async () => {
  upstreams = await startFakeUpstreams();
});
after(async () => {
  await upstreams?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('embedded first start and restart', () => {
  it('when started on an empty data dir, then an admin token (0600) and a demo key are made once and everything persists', async () => {
    const dataDir = tempDir();
    const first = await startGateway(embeddedEnv(dataDir));
    let acmeKey: string;
    let revokedKey: string;
    try {
      const { generatedAdminToken, demo, adminToken } = first.handle;
      assert.ok(generatedAdminToken, 'a token is generated on first start');
      assert.equal(generatedAdminToken.token, adminToken);
      const tokenFile = path.join(dataDir, 'admin-token');
      assert.equal(generatedAdminToken.path, tokenFile);
      assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
      assert.equal(readFileSync(tokenFile, 'utf8').trim(), adminToken);

      assert.ok(demo, 'the demo organization is bootstrapped on first start');
      assert.equal(demo.orgId, 'demo');
      const search = await request(`${first.base}/api/v1/agent/kb/search?query=x`, {
        key: demo.key,
      });
      assert.equal(search.status, 200);
      assert.equal(search.headers.get('ratelimit-policy'), '"key";q=600;w=60, "org";q=3000;w=60');
      const demoKeys = await admin(first, 'GET', '/orgs/demo/keys');
      assert.deepEqual(demoKeys.json.keys[0].scopes, [
        'kb:read',
        'faq:read',
        'tickets:read',
        'tickets:write',
        'answers:write',
      ]);

      assert.equal((await admin(first, 'POST', '/orgs', { name: 'Acme', id: 'acme' })).status, 201);
      await admin(first, 'PATCH', '/orgs/acme/settings', { rate_limit_per_key_per_min: 9 });
      acmeKey = (await admin(first, 'POST', '/orgs/acme/keys', { scopes: ['kb:read'] })).json.key;
      const toRevoke = await admin(first, 'POST', '/orgs/acme/keys', { scopes: ['kb:read'] });
      revokedKey = toRevoke.json.key;
      assert.equal(
        (await admin(first, 'DELETE', `/orgs/acme/keys/${toRevoke.json.id}`)).status,
        204,
      );
    } finally {
      await first.stop();
    }

    upstreams.reset();
    const second = await startGateway(embeddedEnv(dataDir));
    try {
      // Start-up reconciliation pushes every organization's answer policy.
      for (let i = 0; i < 100 && upstreams.calls.setOrgPolicy.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(upstreams.calls.setOrgPolicy.map((c) => c.orgId).sort(), ['acme', 'demo']);
      assert.equal(second.handle.generatedAdminToken, undefined, 'the token is not regenerated');
      assert.equal(second.handle.demo, undefined, 'the demo is bootstrapped only once');
      assert.equal(second.handle.adminToken, first.handle.adminToken);
      const orgs = await admin(second, 'GET', '/orgs');
      assert.deepEqual(
        orgs.json.orgs.map((o: { id: string }) => o.id),
        ['demo', 'acme'],
      );
      assert.equal(orgs.json.orgs[1].settings.rate_limit_per_key_per_min, 9);
      const ok = await request(`${second.base}/api/agent/kb/search?query=x`, { key: acmeKey });
      assert.equal(ok.status, 200);
      assert.match(ok.headers.get('ratelimit-policy') ?? '', /^"key";q=9;/);
      assert.equal(
        (await request(`${second.base}/api/agent/kb/search?query=x`, { key: revokedKey })).status,
        401,
      );
      assert.equal(
        (
          await request(`${second.base}/api/agent/kb/search?query=x`, {
            key: first.handle.demo!.key,
          })
        ).status,
        200,
      );
    } finally {
      await second.stop();
    }
  });

  it('when ADMIN_TOKEN is given in embedded mode, then it is used and no token file is written', async () => {
    const dataDir = tempDir();
    const gw = await startGateway({
      ...embeddedEnv(dataDir),
      ADMIN_TOKEN: 'given-admin-token-1234567890',
    });
    try {
      assert.equal(gw.handle.adminToken, 'given-admin-token-1234567890');
      assert.equal(gw.handle.generatedAdminToken, undefined);
      assert.equal(existsSync(path.join(dataDir, 'admin-token')), false);
      assert.equal((await admin(gw, 'GET', '/orgs')).status, 200);
    } finally {
      await gw.stop();
    }
  });
});

describe('bootstrapDemo', () => {
  it('when the store is empty it creates demo once; when any organization exists it does nothing', async () => {
    const dir = tempDir();
    const store = new EmbeddedGatewayStore(path.join(dir, 'a.jsonl'));
    const demo = await bootstrapDemo(store);
    assert.ok(demo);
    assert.match(demo.key, /^sak_live_/);
    assert.equal(await bootstrapDemo(store), undefined);
    await store.close();

    const other = new EmbeddedGatewayStore(path.join(dir, 'b.jsonl'));
    await new OrgAdmin(other).createOrg({ name: 'Existing', id: 'existing' });
    assert.equal(await bootstrapDemo(other), undefined);
    assert.equal(await other.getOrg('demo'), undefined);
    await other.close();
  });
});

describe('configuration', () => {
  it('when not embedded and MYSQL_URL, REDIS_URL or ADMIN_TOKEN is missing, then start-up is refused naming them', () => {
    assert.throws(
      () => loadGatewayConfig({}),
      (err: unknown) =>
        err instanceof ConfigError &&
        /MYSQL_URL/.test(err.message) &&
        /REDIS_URL/.test(err.message) &&
        /ADMIN_TOKEN/.test(err.message),
    );
    assert.throws(
      () => loadGatewayConfig({ MYSQL_URL: 'mysql://u:p@h/db', ADMIN_TOKEN: 'x'.repeat(20) }),
      /REDIS_URL/,
    );
  });

  it('when embedded, then backends are optional and the documented defaults apply', () => {
    const c = loadGatewayConfig({ EMBEDDED: 'true' });
    assert.equal(c.PORT, 8080);
    assert.equal(c.HOST, '0.0.0.0');
    assert.equal(c.ADMIN_PORT, 8081);
    assert.equal(c.ADMIN_HOST, '127.0.0.1');
    assert.equal(c.PUBLIC_BASE_URL, undefined, 'unset: derived from each request');
    assert.deepEqual(c.AUTHORIZATION_SERVERS, []);
    assert.equal(c.TICKETS_ADDR.address, '127.0.0.1:50051');
    assert.equal(c.DIGEST_ADDR.address, '127.0.0.1:50054');
    assert.equal(c.KEY_CACHE_TTL_MS, 500);
    assert.equal(c.AUTH_FAILURES_PER_MIN_PER_IP, 20);
    assert.equal(c.GRPC_DEADLINE_MS, 5000);
    assert.equal(c.TRUST_PROXY, false);
    assert.equal(c.MYSQL_URL, undefined);
    assert.equal(
      loadGatewayConfig({ EMBEDDED: 'true', PUBLIC_BASE_URL: 'https://x.test/' }).PUBLIC_BASE_URL,
      'https://x.test',
    );
    assert.equal(loadGatewayConfig({ EMBEDDED: 'true', TRUST_PROXY: '2' }).TRUST_PROXY, 2);
  });

  it('when PORT_BASE is set, then the listeners and upstream addresses follow it; explicit ones win; metrics bind loopback', () => {
    const c = loadGatewayConfig({ EMBEDDED: 'true', PORT_BASE: '18500', ADMIN_PORT: '7001' });
    assert.equal(c.PORT, 18500);
    assert.equal(c.ADMIN_PORT, 7001);
    assert.equal(c.TICKETS_ADDR.address, '127.0.0.1:18511');
    assert.equal(c.DIGEST_ADDR.address, '127.0.0.1:18514');
    assert.equal(c.METRICS_PORT, 18525);
    assert.equal(c.METRICS_HOST, '127.0.0.1');
    assert.equal(
      loadGatewayConfig({ EMBEDDED: 'true', METRICS_HOST: '0.0.0.0' }).METRICS_HOST,
      '0.0.0.0',
    );
  });

  it('when the key cache TTL exceeds 1 s, then the configuration is rejected', () => {
    assert.throws(
      () => loadGatewayConfig({ EMBEDDED: 'true', KEY_CACHE_TTL_MS: '1500' }),
      /KEY_CACHE_TTL_MS/,
    );
  });
});
