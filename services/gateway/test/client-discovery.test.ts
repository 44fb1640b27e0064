// Component tests of what clients discover before their first successful call: the base URL the
// gateway names (PUBLIC_BASE_URL, or the address the client used), the RFC 9728 metadata with and
// without an authorization server, the served document's `servers`, and the 404s that OAuth
// clients reach when they look for a login this API does not offer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '@support-agent/shared';
import { httpRequest, type HttpResponse } from '../../../test/support/http-raw.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { loadGatewayConfig } from '../src/config.js';
import { startFakeUpstreams, type FakeUpstreams } from './support/fake-upstreams.js';
import { orgWithKey, requireEnv, startGateway, type TestGateway } from './support/gateway.js';

const AS = 'https://login.example.test';
const PROBE_HINT = /no OAuth authorization server.*Authorization: Bearer <API key>/;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let upstreams: FakeUpstreams;
let derived: TestGateway; // PUBLIC_BASE_URL unset
let proxied: TestGateway; // PUBLIC_BASE_URL unset, behind a trusted proxy
let withAs: TestGateway; // PUBLIC_BASE_URL and AUTHORIZATION_SERVERS set
let key: string;

/** A request with the Host (and other) headers a client on another address would send. */
async function send(
  gw: TestGateway,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<HttpResponse> {
  const res = await httpRequest(gw.base, method, path, {
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body } : {}),
  });
  assert.equal(res.kind, 'response');
  return res as HttpResponse;
}

before(async () => {
  db = await createTestDatabase('gwdisc');
  upstreams = await startFakeUpstreams();
  const env = {
    MYSQL_URL: db.url,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    UPSTREAM: upstreams.address,
  };
  derived = await startGateway({ ...env, PUBLIC_BASE_URL: undefined });
  proxied = await startGateway({ ...env, PUBLIC_BASE_URL: undefined, TRUST_PROXY: 'loopback' });
  withAs = await startGateway({ ...env, AUTHORIZATION_SERVERS: `${AS}/, ${AS}/tenant` });
  ({ key } = await orgWithKey(derived));
});

after(async () => {
  for (const gw of [derived, proxied, withAs]) await gw?.stop();
  await upstreams?.stop();
  await db?.drop();
});

describe('the base URL clients are told', () => {
  it('when PUBLIC_BASE_URL is unset, then metadata and challenges name the address the client used', async () => {
    const port = new URL(derived.base).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const meta = await send(derived, 'GET', '/.well-known/oauth-protected-resource/api/mcp', {
        host,
      });
      assert.equal(meta.json.resource, `http://${host}/api/mcp`);
      assert.equal(meta.json.resource_documentation, `http://${host}/docs`);
      const mcp = await send(derived, 'POST', '/api/mcp', { host }, '{}');
      assert.equal(mcp.status, 401);
      assert.equal(
        mcp.headers['www-authenticate'],
        `Bearer realm="support-agent", resource_metadata="http://${host}/.well-known/oauth-protected-resource/api/mcp"`,
      );
      const rest = await send(derived, 'GET', '/api/v1/agent/faq', { host });
      assert.match(
        String(rest.headers['www-authenticate']),
        new RegExp(
          `resource_metadata="http://${host.replace(/[[\].]/g, '\\$&')}/\\.well-known/oauth-protected-resource"`,
        ),
      );
    }
  });

  it('when the Host header is not a host name, then the fallback base URL is named instead', async () => {
    const res = await send(derived, 'GET', '/.well-known/oauth-protected-resource', {
      host: 'evil.example", x="1',
    });
    assert.equal(res.status, 200);
    assert.match(res.json.resource, /^http:\/\/localhost:\d+$/);
  });

  it('when a trusted proxy forwards the request, then its X-Forwarded-Proto and -Host are used; an untrusted one is ignored', async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.test' };
    const viaProxy = await send(proxied, 'GET', '/.well-known/oauth-protected-resource', forwarded);
    assert.equal(viaProxy.json.resource, 'https://api.example.test');
    const direct = await send(derived, 'GET', '/.well-known/oauth-protected-resource', forwarded);
    assert.match(direct.json.resource, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('when PUBLIC_BASE_URL is set, then it is named whatever address the client used', async () => {
    const res = await send(withAs, 'GET', '/.well-known/oauth-protected-resource', {
      host: 'localhost:1234',
    });
    assert.equal(res.json.resource, 'https://api.example.test');
  });

  it('when the document is served, then its first server is relative to it (PUBLIC_BASE_URL follows when set)', async () => {
    const plain = await send(derived, 'GET', '/api/v1/agent/openapi.json', { host: 'a.test' });
    assert.deepEqual(
      plain.json.servers.map((s: { url: string }) => s.url),
      ['/'],
    );
    const set = await send(withAs, 'GET', '/api/agent/openapi.json');
    assert.deepEqual(
      set.json.servers.map((s: { url: string }) => s.url),
      ['/', 'https://api.example.test'],
    );
  });
});

describe('authentication without OAuth', () => {
  it('when no authorization server is configured, then the metadata names none and says to send an API key', async () => {
    for (const path of ['', '/api/mcp']) {
      const res = await send(derived, 'GET', `/.well-known/oauth-protected-resource${path}`);
      assert.equal(res.json.authorization_servers, undefined);
      assert.equal(res.json['x-authentication'].oauth_login, false);
      assert.equal(res.json['x-authentication'].header, 'Authorization');
      assert.equal(res.json['x-authentication'].scheme, 'Bearer');
      assert.match(res.json['x-authentication'].description, /no OAuth login/);
    }
  });

  it('when AUTHORIZATION_SERVERS is set, then the metadata lists them (RFC 9728 authorization_servers)', async () => {
    const res = await send(withAs, 'GET', '/.well-known/oauth-protected-resource/api/mcp');
    assert.deepEqual(res.json.authorization_servers, [AS, `${AS}/tenant`]);
    assert.equal(res.json['x-authentication'].oauth_login, true);
  });

  it('when AUTHORIZATION_SERVERS holds something that is not an https issuer, then the config is refused', () => {
    for (const bad of ['login.example.test', 'http://login.example.test', 'ftp://x.test']) {
      assert.throws(
        () => loadGatewayConfig({ EMBEDDED: 'true', AUTHORIZATION_SERVERS: bad }),
        (err: Error) => err instanceof ConfigError && /AUTHORIZATION_SERVERS/.test(err.message),
        bad,
      );
    }
    assert.deepEqual(
      loadGatewayConfig({ EMBEDDED: 'true', AUTHORIZATION_SERVERS: 'http://127.0.0.1:9000/' })
        .AUTHORIZATION_SERVERS,
      ['http://127.0.0.1:9000'],
    );
  });

  it('when an MCP request carries a bad key, then the 401 challenge describes the error (RFC 6750 §3); REST stays bare', async () => {
    const mcp = await send(
      derived,
      'POST',
      '/api/mcp',
      { authorization: 'Bearer sak_live_x' },
      '{}',
    );
    assert.equal(mcp.status, 401);
    assert.match(
      String(mcp.headers['www-authenticate']),
      /, error="invalid_token", error_description="The API key is invalid or revoked"$/,
    );
    assert.equal(mcp.json.error.code, 'unauthorized');
    const rest = await send(derived, 'GET', '/api/v1/agent/faq', { authorization: 'Bearer x' });
    assert.match(String(rest.headers['www-authenticate']), /, error="invalid_token"$/);
  });

  it('when an OAuth client looks for an authorization server or registers, then 404 says to send an API key', async () => {
    for (const [method, path] of [
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/.well-known/oauth-authorization-server/api/mcp'],
      ['GET', '/.well-known/openid-configuration'],
      ['GET', '/api/mcp/.well-known/openid-configuration'],
      ['POST', '/register'],
      ['GET', '/authorize'],
      ['POST', '/token'],
    ] as const) {
      const res = await send(derived, method, path, {}, method === 'POST' ? '{}' : undefined);
      assert.equal(res.status, 404, path);
      assert.equal(res.json.error.code, 'not_found');
      assert.match(res.json.error.message, PROBE_HINT, path);
    }
    const other = await send(derived, 'GET', '/registers');
    assert.doesNotMatch(other.json.error.message, PROBE_HINT);
  });
});

describe('errors', () => {
  it('when a path under a prefix is unknown, then the 404 message names the path as sent', async () => {
    for (const path of ['/api/v1/agent/nope', '/api/agent/kb/nope', '/nope']) {
      const res = await send(derived, 'GET', path, { authorization: `Bearer ${key}` });
      assert.equal(res.status, 404);
      assert.equal(res.json.error.message, `no such path: ${path}`);
    }
  });
});
