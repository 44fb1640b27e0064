// The admin CLI (built: `npx tsc -b services/gateway`) against a running admin listener.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  request,
  startGateway,
  startGatewayBackends,
  uniqueSlug,
  type GatewayBackends,
  type TestGateway,
} from './support/gateway.js';
import { stopAll } from '../../../test/support/testing.js';

const CLI = fileURLToPath(new URL('../dist/cli/admin.js', import.meta.url));

let backends: GatewayBackends;
let gw: TestGateway;
let dataDir: string;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI asynchronously (the gateway runs in this process: never block the loop). */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ADMIN_URL: gw.adminBase,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: undefined,
  };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete childEnv[k];
    else childEnv[k] = v;
  }
  if (childEnv.ADMIN_TOKEN === undefined) delete childEnv.ADMIN_TOKEN;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: childEnv, timeout: 20_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

before(async () => {
  assert.ok(existsSync(CLI), `${CLI} missing: run \`npx tsc -b services/gateway\` first`);
  // Embedded: the CLI finds the generated token in DATA_DIR/admin-token.
  backends = await startGatewayBackends('gw-cli', { embedded: true });
  dataDir = backends.dataDir;
  gw = await startGateway(backends.env);
});

after(() => stopAll(gw, backends));

describe('admin CLI', () => {
  it('when organizations are created and listed, then it prints them (and JSON with --json)', async () => {
    const slug = uniqueSlug('cli');
    const created = await cli(['orgs', 'create', 'Acme Inc', '--id', slug]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, new RegExp(`Created organization ${slug} \\(Acme Inc\\)`));

    const list = await cli(['orgs', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^ID\s+NAME/);
    assert.match(list.stdout, new RegExp(`${slug}\\s+Acme Inc`));

    const json = await cli(['--json', 'orgs', 'list']);
    const ids = JSON.parse(json.stdout).orgs.map((o: { id: string }) => o.id);
    assert.ok(ids.includes('demo') && ids.includes(slug));
    const generated = JSON.parse((await cli(['orgs', 'create', 'No slug', '--json'])).stdout);
    assert.match(generated.id, /^org_/);
  });

  it('when ADMIN_URL is unset, then the CLI finds the admin API where PORT_BASE puts it (base + 1), unless ADMIN_PORT says otherwise', async () => {
    const adminPort = Number(new URL(gw.adminBase).port);
    const moved = await cli(['orgs', 'list'], {
      ADMIN_URL: undefined,
      ADMIN_PORT: undefined,
      PORT_BASE: String(adminPort - 1),
    });
    assert.equal(moved.code, 0, moved.stderr);
    const explicit = await cli(['orgs', 'list'], {
      ADMIN_URL: undefined,
      ADMIN_PORT: String(adminPort),
      PORT_BASE: String(adminPort + 100),
    });
    assert.equal(explicit.code, 0, explicit.stderr);
  });

  it('when a command fails, then it exits non-zero with the error message', async () => {
    const dup = await cli(['orgs', 'create', 'Again', '--id', 'demo']);
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /organization demo already exists \(conflict\)/);

    const nothing = await cli(['settings', 'set', 'demo']);
    assert.notEqual(nothing.code, 0);
    assert.match(nothing.stderr, /nothing to change/);

    const wrongToken = await cli(['orgs', 'list'], { ADMIN_TOKEN: 'not-the-token' });
    assert.notEqual(wrongToken.code, 0);
    assert.match(wrongToken.stderr, /invalid admin token \(unauthorized\)/);

    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const closedPort = (server.address() as net.AddressInfo).port;
    await new Promise((r) => server.close(r));
    const unreachable = await cli(['orgs', 'list'], {
      ADMIN_URL: `http://127.0.0.1:${closedPort}`,
    });
    assert.notEqual(unreachable.code, 0);
    assert.match(unreachable.stderr, /cannot reach the admin API/);

    const noToken = await cli(['orgs', 'list'], { DATA_DIR: path.join(dataDir, 'nowhere') });
    assert.notEqual(noToken.code, 0);
    assert.match(noToken.stderr, /no admin token/);
  });

  it('when settings are set, then the new values are printed', async () => {
    const res = await cli([
      'settings',
      'set',
      'demo',
      '--rate-limit-per-key',
      '70',
      '--threshold',
      '0',
      '--json',
    ]);
    assert.equal(res.code, 0, res.stderr);
    const settings = JSON.parse(res.stdout);
    assert.equal(settings.rate_limit_per_key_per_min, 70);
    assert.equal(settings.high_confidence_threshold, 0);
    const human = await cli([
      'settings',
      'set',
      'demo',
      '--rate-limit-per-org',
      '900',
      '--deflection-limit',
      '5',
    ]);
    assert.match(human.stdout, /rate_limit_per_org_per_min\s+900/);
    assert.match(human.stdout, /deflection_monthly_limit\s+5/);
    const bad = await cli(['settings', 'set', 'demo', '--threshold', '101']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /high_confidence_threshold/);
  });

  it('when a key is created, listed and revoked, then the key is shown once and stops working', async () => {
    const created = await cli([
      'keys',
      'create',
      'demo',
      '--scopes',
      'kb:read,faq:read',
      '--name',
      'bot',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const key = /sak_live_[0-9A-Za-z]{38}/.exec(created.stdout)?.[0];
    assert.ok(key, created.stdout);
    assert.match(created.stdout, /will not be shown again/);
    assert.equal((await request(`${gw.base}/api/v1/agent/faq`, { key })).status, 200);

    const list = JSON.parse((await cli(['keys', 'list', 'demo', '--json'])).stdout);
    const entry = list.keys.find((k: { name: string }) => k.name === 'bot');
    assert.deepEqual(entry.scopes, ['kb:read', 'faq:read']);
    assert.equal(entry.prefix, key.slice(0, 12));
    assert.match((await cli(['keys', 'list', 'demo'])).stdout, new RegExp(entry.id));

    const revoked = await cli(['keys', 'revoke', 'demo', entry.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, new RegExp(`Revoked key ${entry.id}`));
    await new Promise((r) => setTimeout(r, 600));
    assert.equal((await request(`${gw.base}/api/v1/agent/faq`, { key })).status, 401);

    const badScope = await cli(['keys', 'create', 'demo', '--scopes', 'kb:read,admin']);
    assert.notEqual(badScope.code, 0);
    assert.match(badScope.stderr, /unknown scope/);
    const json = JSON.parse(
      (await cli(['keys', 'create', 'demo', '--scopes', 'tickets:write', '--json'])).stdout,
    );
    assert.match(json.key, /^sak_live_/);
    assert.deepEqual(json.scopes, ['tickets:write']);
  });

  it('when a ticket status is set, then the ticket is printed; a forbidden transition fails', async () => {
    const ok = await cli(['tickets', 'set-status', 'demo', '42', 'in_progress', '--json']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).status, 'in_progress');
    const human = await cli(['tickets', 'set-status', 'demo', '42', 'resolved']);
    assert.match(human.stdout, /Ticket 42 is now resolved/);
    const conflict = await cli(['tickets', 'set-status', 'demo', '42', 'closed']);
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /\(conflict\)/);
  });
});
