// The images' HEALTHCHECK probe (deploy/healthcheck/healthcheck.mjs) against a real service
// process: it follows PORT_BASE and explicit addresses exactly as the service does, and fails
// when nothing serves where the configuration says. (`npm run images:smoke` runs it inside
// the images through `podman healthcheck run`.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT } from '../../scripts/validate-deploy.js';
import { freePort } from '../support/backends.js';
import { ServiceProcess } from '../support/process.js';
import { waitFor } from '../support/stack.js';

const PROBE = path.join(ROOT, 'deploy/healthcheck/healthcheck.mjs');

/** Runs the probe for `service` with only `env` (and PATH); resolves with its exit code. */
function probe(service: string, env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, [PROBE, service], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: 'ignore',
  });
  return new Promise((done) => child.on('exit', (code) => done(code)));
}

/** A PORT_BASE whose knowledge gRPC slot (+12) is free now. */
async function freeBase(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port - 12 >= 1024 && port + 13 <= 65535) return port - 12;
  }
}

describe('the images HEALTHCHECK probe', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'healthcheck-'));
  let base: number;
  let env: Record<string, string>;
  let knowledge: ServiceProcess;

  before(async () => {
    base = await freeBase();
    env = {
      PORT_BASE: String(base),
      METRICS_PORT: '0',
      EMBEDDED: 'true',
      DATA_DIR: path.join(dir, 'data'),
    };
    knowledge = new ServiceProcess('knowledge', 'knowledge', env, dir);
    knowledge.start();
    await waitFor(
      async () => (await probe('knowledge', env)) === 0,
      30_000,
      () => knowledge.logs(),
    );
  });

  after(async () => {
    await knowledge?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when the service listens where PORT_BASE puts it, then the probe passes', async () => {
    assert.equal(await probe('knowledge', env), 0);
  });

  it('when the explicit address names the listener (a wildcard host), then the probe asks it there', async () => {
    const explicit = { ...env, PORT_BASE: '', KNOWLEDGE_ADDR: `0.0.0.0:${base + 12}` };
    assert.equal(await probe('knowledge', explicit), 0);
  });

  it('when the configuration points elsewhere than the listener, then the probe fails', async () => {
    assert.equal(await probe('knowledge', { ...env, PORT_BASE: String(base + 100) }), 1);
  });

  it('when the configuration is invalid or the service unknown, then the probe fails', async () => {
    assert.equal(await probe('knowledge', { ...env, PORT_BASE: 'not-a-port' }), 1);
    assert.equal(await probe('nothing', env), 2);
  });
});
