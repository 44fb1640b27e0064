// Starts gateways for component tests (port 0, silent logs) and talks to them over HTTP.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@support-agent/shared';
import { createTestDatabase } from '../../../../test/support/mysql.js';
import { api } from '../../../../test/support/stack.js';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config.js';
import { start, type GatewayHandle } from '../../src/server.js';
import { startFakeUpstreams, type FakeUpstreams } from './fake-upstreams.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const TEST_BASE_URL = 'https://api.example.test';
export const ALL_SCOPES = ['kb:read', 'faq:read', 'tickets:read', 'tickets:write', 'answers:write'];

/** Config for a test gateway; upstreams at `upstream`, everything overridable via env. */
export function testConfig(env: Record<string, string | undefined>): GatewayConfig {
  const upstream = env.UPSTREAM ?? '127.0.0.1:1';
  return loadGatewayConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    TICKETS_ADDR: upstream,
    KNOWLEDGE_ADDR: upstream,
    ANSWERS_ADDR: upstream,
    DIGEST_ADDR: upstream,
    PUBLIC_BASE_URL: TEST_BASE_URL,
    GRPC_DEADLINE_MS: '2000',
    // Every test client is 127.0.0.1 on a shared Redis: only the throttle test uses a low limit.
    AUTH_FAILURES_PER_MIN_PER_IP: '1000000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
}

/** What the gateways of one test file share: their store and canned gRPC upstreams. */
export interface GatewayBackends {
  upstreams: FakeUpstreams;
  /** For startGateway: the store (MYSQL_URL and REDIS_URL, or EMBEDDED and DATA_DIR) and UPSTREAM. */
  env: Record<string, string | undefined>;
  /** The embedded store's folder (with `embedded`). */
  dataDir: string;
  /** Stops the upstreams and removes the database or folder. */
  stop(): Promise<void>;
}

/**
 * A fresh database on the test MariaDB (named after `prefix`) with the test Redis, or with
 * `embedded` a new DATA_DIR and a generated admin token, plus fake upstreams.
 */
export async function startGatewayBackends(
  prefix: string,
  options: { embedded?: boolean } = {},
): Promise<GatewayBackends> {
  const upstreams = await startFakeUpstreams();
  if (options.embedded) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
    return {
      upstreams,
      dataDir,
      env: {
        EMBEDDED: 'true',
        DATA_DIR: dataDir,
        ADMIN_TOKEN: undefined,
        UPSTREAM: upstreams.address,
      },
      async stop() {
        await upstreams.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const db = await createTestDatabase(prefix);
  return {
    upstreams,
    dataDir: '',
    env: {
      MYSQL_URL: db.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      UPSTREAM: upstreams.address,
    },
    async stop() {
      await upstreams.stop();
      await db.drop();
    },
  };
}

export interface TestGateway {
  handle: GatewayHandle;
  base: string;
  adminBase: string;
  config: GatewayConfig;
  stop(): Promise<void>;
}

export async function startGateway(env: Record<string, string | undefined>): Promise<TestGateway> {
  const config = testConfig(env);
  const handle = await start(config, createLogger('gateway', config.LOG_LEVEL));
  return {
    handle,
    config,
    base: `http://127.0.0.1:${handle.port}`,
    adminBase: `http://127.0.0.1:${handle.adminPort}`,
    stop: () => handle.stop(),
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface RequestOptions {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  /** Objects are sent as JSON with Content-Type application/json; strings as they are. */
  body?: unknown;
}

/** One HTTP request (test/support/stack.ts `api`); objects go as JSON, strings as they are. */
export function request(url: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const { body, ...rest } = opts;
  return api(url, opts.method ?? 'GET', '', {
    ...rest,
    ...(typeof body === 'string' ? { rawBody: body } : { body }),
  });
}

/** Calls the admin API with the test admin token. */
export function admin(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpResult> {
  return request(`${gw.adminBase}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${gw.handle.adminToken}` },
    ...(body !== undefined ? { body } : {}),
  });
}

/** Asserts an error answer: the status, a JSON body and its error code (and param, when given). */
export function assertError(res: HttpResult, status: number, code: string, param?: string): void {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
  assert.equal(res.json?.error?.code, code, res.text);
  if (param !== undefined) assert.equal(res.json.error.param, param, res.text);
}

/** Creates an organization through the admin API; returns its id (`prefix-…`). */
export async function createOrg(gw: TestGateway, prefix: string, name = 'Org'): Promise<string> {
  const id = uniqueSlug(prefix);
  assert.equal((await admin(gw, 'POST', '/orgs', { name, id })).status, 201);
  return id;
}

export function uniqueSlug(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

/** Creates an organization (optionally with settings) and a key with the given scopes. */
export async function orgWithKey(
  gw: TestGateway,
  scopes: string[] = ALL_SCOPES,
  settings?: Record<string, number>,
): Promise<{ orgId: string; key: string; keyId: string }> {
  const orgId = uniqueSlug('org');
  const created = await admin(gw, 'POST', '/orgs', { name: `Test ${orgId}`, id: orgId });
  if (created.status !== 201) throw new Error(`create org: ${created.status} ${created.text}`);
  if (settings) {
    const patched = await admin(gw, 'PATCH', `/orgs/${orgId}/settings`, settings);
    if (patched.status !== 200) throw new Error(`settings: ${patched.status} ${patched.text}`);
  }
  const key = await admin(gw, 'POST', `/orgs/${orgId}/keys`, { scopes, name: 'test' });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${key.text}`);
  return { orgId, key: key.json.key as string, keyId: key.json.id as string };
}

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\``);
  return value;
}
