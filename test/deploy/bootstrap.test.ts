// deploy/bootstrap/bootstrap.mjs (compose `init`, Kubernetes Job `bootstrap`) against a real
// gateway: `node services/gateway/dist/main.js` in embedded mode (no MySQL/Redis needed) on
// free ports, the script run as a child process like the container runs it. Build first
// (`npm test` does; alone: npx tsc -b services/gateway).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT } from '../../scripts/validate-deploy.js';
import { freePort } from '../support/backends.js';

const SCRIPT = path.join(ROOT, 'deploy/bootstrap/bootstrap.mjs');
const GATEWAY_MAIN = path.join(ROOT, 'services/gateway/dist/main.js');
const ADMIN_TOKEN = 'bootstrap-test-admin-token';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBootstrap(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SCRIPT], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

class Gateway {
  child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly adminPort: number,
    readonly dataDir: string,
  ) {}

  start(): void {
    this.child = spawn(process.execPath, [GATEWAY_MAIN], {
      cwd: path.dirname(path.dirname(GATEWAY_MAIN)),
      env: {
        PATH: process.env.PATH ?? '',
        EMBEDDED: 'true',
        DATA_DIR: this.dataDir,
        ADMIN_TOKEN,
        PORT: String(this.port),
        HOST: '127.0.0.1',
        ADMIN_PORT: String(this.adminPort),
        ADMIN_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  async admin(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: any }> {
    const res = await fetch(`http://127.0.0.1:${this.adminPort}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => undefined) };
  }
}

describe('deploy/bootstrap/bootstrap.mjs against a real gateway', () => {
  let dir: string;
  let gateway: Gateway;
  let env: Record<string, string>;

  before(async () => {
    assert.ok(
      existsSync(GATEWAY_MAIN),
      `${GATEWAY_MAIN} missing: build first (npx tsc -b services/gateway)`,
    );
    dir = mkdtempSync(path.join(os.tmpdir(), 'bootstrap-test-'));
    gateway = new Gateway(await freePort(), await freePort(), dir);
    env = {
      ADMIN_URL: `http://127.0.0.1:${gateway.adminPort}`,
      GATEWAY_URL: `http://127.0.0.1:${gateway.port}`,
      ADMIN_TOKEN,
      BOOTSTRAP_ORG_ID: 'first-org',
      BOOTSTRAP_ORG_NAME: 'First organization',
      BOOTSTRAP_TIMEOUT_SECONDS: '60',
    };
  });

  after(async () => {
    await gateway?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('when the gateway is not up yet, then it waits, creates the organization and an all-scope key, and prints the key once', async () => {
    const run = runBootstrap(env);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    gateway.start();
    const { code, stdout, stderr } = await run;
    assert.equal(code, 0, stderr);
    assert.match(stdout, /waiting for gateway admin API/);
    const keys = [...stdout.matchAll(/^SUPPORT_AGENT_API_KEY=(sak_live_\w+)$/gm)].map((m) => m[1]);
    assert.equal(keys.length, 1, stdout);

    const orgs = await gateway.admin('GET', '/admin/v1/orgs');
    const org = orgs.body.orgs.find((o: any) => o.id === 'first-org');
    assert.equal(org?.name, 'First organization');
    const listed = await gateway.admin('GET', '/admin/v1/orgs/first-org/keys');
    assert.equal(listed.body.keys.length, 1);
    const wellKnown = await fetch(`${env.GATEWAY_URL}/.well-known/oauth-protected-resource`);
    const metadata = (await wellKnown.json()) as { scopes_supported: string[] };
    assert.deepEqual([...listed.body.keys[0].scopes].sort(), [...metadata.scopes_supported].sort());

    // The printed key authenticates (the tickets service is not running: 503, not 401/403).
    const res = await fetch(`${env.GATEWAY_URL}/api/v1/agent/tickets`, {
      headers: { authorization: `Bearer ${keys[0]}` },
    });
    assert.ok(![401, 403].includes(res.status), `key accepted (got ${res.status})`);
  });

  it('when it runs again, then it changes nothing and prints no key', async () => {
    const { code, stdout, stderr } = await runBootstrap(env);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /already has key "bootstrap".*nothing to do/);
    assert.doesNotMatch(stdout, /SUPPORT_AGENT_API_KEY=/);
    const listed = await gateway.admin('GET', '/admin/v1/orgs/first-org/keys');
    assert.equal(listed.body.keys.length, 1);
  });

  it('when the organization exists without the bootstrap key (an interrupted run), then it adds the key', async () => {
    const created = await gateway.admin('POST', '/admin/v1/orgs', {
      id: 'half-done',
      name: 'Half done',
    });
    assert.equal(created.status, 201);
    const { code, stdout, stderr } = await runBootstrap({ ...env, BOOTSTRAP_ORG_ID: 'half-done' });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /exists without key "bootstrap"/);
    assert.match(stdout, /^SUPPORT_AGENT_API_KEY=sak_live_/m);
  });

  it('when ADMIN_TOKEN is wrong, then it fails at once instead of waiting', async () => {
    const started = Date.now();
    const { code, stderr } = await runBootstrap({ ...env, ADMIN_TOKEN: 'wrong-token-wrong-token' });
    assert.equal(code, 1);
    assert.match(stderr, /rejected ADMIN_TOKEN/);
    assert.ok(Date.now() - started < 10_000);
  });

  it('when the gateway never comes up, then it gives up after BOOTSTRAP_TIMEOUT_SECONDS with exit code 1', async () => {
    const port = await freePort();
    const { code, stderr } = await runBootstrap({
      ...env,
      ADMIN_URL: `http://127.0.0.1:${port}`,
      BOOTSTRAP_TIMEOUT_SECONDS: '3',
    });
    assert.equal(code, 1);
    assert.match(stderr, /not available after 3 s/);
  });

  it("when only the gateway's ports are given (ADMIN_PORT and PORT, or PORT_BASE), then it finds the gateway as the gateway lays them out", async () => {
    const { ADMIN_URL: _admin, GATEWAY_URL: _gateway, ...withoutUrls } = env;
    const byPorts = await runBootstrap({
      ...withoutUrls,
      ADMIN_PORT: String(gateway.adminPort),
      PORT: String(gateway.port),
    });
    assert.equal(byPorts.code, 0, byPorts.stderr);
    assert.match(byPorts.stdout, /already has key "bootstrap".*nothing to do/);

    const base = await freePort();
    const byBase = await runBootstrap({
      ...withoutUrls,
      PORT_BASE: String(base),
      BOOTSTRAP_TIMEOUT_SECONDS: '2',
    });
    assert.equal(byBase.code, 1);
    assert.ok(
      byBase.stderr.includes(`at http://127.0.0.1:${base + 1}/admin/v1/orgs not available`),
      byBase.stderr,
    );
  });

  it('when the configuration is invalid, then it says which variable is wrong', async () => {
    const short = await runBootstrap({ ...env, ADMIN_TOKEN: 'short' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /ADMIN_TOKEN is required/);
    const slug = await runBootstrap({ ...env, BOOTSTRAP_ORG_ID: 'Not A Slug' });
    assert.equal(slug.code, 1);
    assert.match(slug.stderr, /BOOTSTRAP_ORG_ID "Not A Slug" is not a slug/);
  });
});
