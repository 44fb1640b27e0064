// Starts gateways for component tests (port 0, silent logs) and talks to them over HTTP.
import { randomBytes } from 'node:crypto';
import { createLogger } from '@support-agent/shared';
import { loadGatewayConfig, type GatewayConfig } from '../../src/config.js';
import { start, type GatewayHandle } from '../../src/server.js';

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

export async function request(url: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (typeof opts.body === 'string') {
    body = opts.body;
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, {
    method: opts.method ?? 'GET',
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
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
