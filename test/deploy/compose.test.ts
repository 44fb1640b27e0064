// Policies on docker-compose.yml as docker compose sees it (YAML merge keys, .env interpolated):
// healthchecks, memory limits and conditional depends_on everywhere, pinned images, named
// volumes, every address from .env pointing at a compose service, the one-shot init.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import {
  ROOT,
  loadCompose,
  validateComposeSchema,
  type ComposeProject,
} from '../../scripts/validate-deploy.js';
import { dockerfile, readDockerfile } from './dockerfile.js';

/** Our five services and the port each listens on; init runs the gateway image once. */
const SERVICES: Record<string, { port: number; addrVar?: string }> = {
  gateway: { port: 8080 },
  tickets: { port: 50051, addrVar: 'TICKETS_ADDR' },
  knowledge: { port: 50052, addrVar: 'KNOWLEDGE_ADDR' },
  answers: { port: 50053, addrVar: 'ANSWERS_ADDR' },
  digest: { port: 50054, addrVar: 'DIGEST_ADDR' },
};
/** Backend URL variables of .env → the compose service and port they must point at. */
const BACKEND_URLS: Record<string, [string, number]> = {
  MYSQL_URL: ['mysql', 3306],
  REDIS_URL: ['redis', 6379],
  NATS_URL: ['nats', 4222],
  QDRANT_URL: ['qdrant', 6333],
  GATEWAY_URL: ['gateway', 8080],
  ADMIN_URL: ['gateway', 8081],
};

let project: ComposeProject;
let services: Record<string, any>;

before(() => {
  project = loadCompose();
  services = project.model.services as Record<string, any>;
});

const isOneShot = (svc: any) => svc.restart === 'no';

describe('docker-compose.yml', () => {
  it('when interpolated with .env, then every variable is defined and the result matches the Compose Specification', () => {
    assert.deepEqual(project.problems, []);
    assert.deepEqual(validateComposeSchema(project.model), []);
  });

  it('when the stack starts, then it has the five services, their four backends and init', () => {
    assert.deepEqual(Object.keys(services).sort(), [
      'answers',
      'digest',
      'gateway',
      'init',
      'knowledge',
      'mysql',
      'nats',
      'qdrant',
      'redis',
      'tickets',
    ]);
  });

  it('when a long-running service runs, then it has a healthcheck; a one-shot disables it explicitly', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (isOneShot(svc)) {
        assert.equal(svc.healthcheck?.disable, true, `${name}: one-shot with healthcheck disabled`);
        continue;
      }
      const test = svc.healthcheck?.test;
      assert.ok(
        Array.isArray(test) && test.length > 1 && test[0] !== 'NONE',
        `${name}: healthcheck test`,
      );
      assert.ok(svc.healthcheck.interval && svc.healthcheck.retries, `${name}: healthcheck timing`);
    }
  });

  it('when a service runs, then it has a memory limit', () => {
    for (const [name, svc] of Object.entries(services)) {
      assert.match(
        String(svc.deploy?.resources?.limits?.memory ?? ''),
        /^\d+[KMG]$/,
        `${name}: memory limit`,
      );
    }
  });

  it('when a service depends on another, then it waits for a condition the other can reach', () => {
    for (const [name, svc] of Object.entries(services)) {
      const deps = svc.depends_on ?? {};
      assert.ok(!Array.isArray(deps), `${name}: depends_on uses the long form with conditions`);
      for (const [dep, spec] of Object.entries<any>(deps)) {
        const target = services[dep];
        assert.ok(target, `${name} depends on unknown ${dep}`);
        if (isOneShot(target))
          assert.equal(spec.condition, 'service_completed_successfully', `${name} → ${dep}`);
        else {
          assert.equal(spec.condition, 'service_healthy', `${name} → ${dep}`);
          assert.ok(target.healthcheck?.test, `${dep} has the healthcheck ${name} waits for`);
        }
      }
    }
  });

  it('when an image is used, then its tag is pinned and never latest', () => {
    for (const [name, svc] of Object.entries(services)) {
      const image = String(svc.image ?? '');
      const tag = image.split('/').pop()?.split(':')[1];
      assert.ok(tag && tag !== 'latest', `${name}: image ${image} pinned`);
    }
  });

  it('when data is stored, then it goes to a declared named volume, never a bind mount', () => {
    const declared = Object.keys((project.model.volumes as object) ?? {});
    for (const [name, svc] of Object.entries(services)) {
      for (const volume of svc.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
        assert.ok(declared.includes(source), `${name}: volume ${source} is a named volume`);
      }
    }
  });

  it('when one of our services runs, then it is built from its Dockerfile target, hardened and configured from .env', () => {
    const version = project.env.SUPPORT_AGENT_VERSION;
    for (const name of [...Object.keys(SERVICES), 'init']) {
      const svc = services[name];
      const image = name === 'init' ? 'gateway' : name;
      assert.equal(svc.image, `support-agent/${image}:${version}`, `${name}: image`);
      assert.equal(svc.build?.context, '.', `${name}: built from the repository root`);
      assert.equal(
        svc.build?.dockerfile ?? 'Dockerfile',
        'Dockerfile',
        `${name}: the one Dockerfile`,
      );
      assert.ok(existsSync(path.join(ROOT, 'Dockerfile')), `${name}: Dockerfile exists`);
      assert.equal(svc.build?.target, image, `${name}: target ${image}`);
      assert.equal(dockerfile(image).runtime.stage.name, image, `${name}: the target exists`);
      assert.deepEqual(svc.env_file, '.env', `${name}: env_file .env`);
      assert.equal(svc.read_only, true, `${name}: read-only root filesystem`);
      assert.deepEqual(svc.cap_drop, ['ALL'], `${name}: no capabilities`);
      assert.ok(svc.security_opt?.includes('no-new-privileges:true'), `${name}: no-new-privileges`);
    }
  });

  it("when an image is built, then NODE_IMAGE (default: the Dockerfile's) and the npm build secrets reach the build", () => {
    const dockerfileDefault = readDockerfile().globalArgs.NODE_IMAGE;
    const secrets = project.model.secrets as Record<string, { file?: string }>;
    assert.deepEqual(Object.keys(secrets).sort(), ['npm_ca', 'npmrc']);
    for (const secret of Object.values(secrets))
      assert.equal(secret.file, '/dev/null', 'empty unless set');
    for (const name of [...Object.keys(SERVICES), 'init']) {
      const build = services[name].build;
      assert.equal(build.args?.NODE_IMAGE, dockerfileDefault, `${name}: NODE_IMAGE`);
      assert.deepEqual(build.secrets, ['npm_ca', 'npmrc'], `${name}: build secrets`);
    }
    const raw = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    assert.match(raw, /NODE_IMAGE: \$\{NODE_IMAGE:-[^}]+\}/, 'NODE_IMAGE can be set from outside');
    assert.match(raw, /file: \$\{NPM_CA_FILE:-\/dev\/null\}/);
    assert.match(raw, /file: \$\{NPMRC_FILE:-\/dev\/null\}/);
  });

  it('when a service listens, then it binds 0.0.0.0:<port> and .env gives clients <service>:<port>', () => {
    for (const [name, { port, addrVar }] of Object.entries(SERVICES)) {
      if (!addrVar) continue;
      assert.equal(services[name].environment?.[addrVar], `0.0.0.0:${port}`, `${name} listens`);
      assert.equal(project.env[addrVar], `${name}:${port}`, `.env ${addrVar}`);
    }
    for (const [variable, [host, port]] of Object.entries(BACKEND_URLS)) {
      const url = new URL(project.env[variable] ?? '');
      assert.equal(url.hostname, host, `.env ${variable} host`);
      assert.equal(Number(url.port), port, `.env ${variable} port`);
    }
    const mysql = new URL(project.env.MYSQL_URL ?? '');
    assert.equal(mysql.username, project.env.MYSQL_USER, 'MYSQL_URL user = MYSQL_USER');
    assert.equal(
      decodeURIComponent(mysql.password),
      project.env.MYSQL_PASSWORD,
      'MYSQL_URL password',
    );
    assert.equal(mysql.pathname.slice(1), project.env.MYSQL_DATABASE, 'MYSQL_URL database');
  });

  it('when a service is health-checked, then compose runs exactly its image HEALTHCHECK', () => {
    for (const name of Object.keys(SERVICES)) {
      const image = dockerfile(name).runtime.healthcheck;
      assert.deepEqual(
        services[name].healthcheck.test,
        ['CMD', ...image],
        `${name}: same check as the image`,
      );
    }
  });

  it('when the host reaches the stack, then only the gateway publishes ports and admin stays on loopback', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (name !== 'gateway') assert.equal(svc.ports, undefined, `${name}: no published ports`);
    }
    const ports: string[] = services.gateway.ports;
    assert.ok(ports.includes('8080:8080'), 'public API on :8080');
    assert.ok(
      ports.filter((p) => p.endsWith(':8081')).every((p) => p.startsWith('127.0.0.1:')),
      'admin API only on the host loopback',
    );
  });

  it('when init runs, then it runs the bootstrap script from the gateway image once the gateway is healthy', () => {
    const init = services.init;
    assert.deepEqual(init.command, ['node', '/app/deploy/bootstrap.mjs']);
    assert.equal(init.restart, 'no');
    assert.deepEqual(init.depends_on, { gateway: { condition: 'service_healthy' } });
    assert.ok(existsSync(path.join(ROOT, 'deploy/bootstrap/bootstrap.mjs')));
    assert.ok(
      dockerfile('gateway').runtime.copies.includes(
        'deploy/bootstrap/bootstrap.mjs /app/deploy/bootstrap.mjs',
      ),
      'the gateway image contains the script',
    );
    for (const v of ['ADMIN_URL', 'GATEWAY_URL', 'ADMIN_TOKEN', 'BOOTSTRAP_ORG_ID']) {
      assert.ok(project.env[v], `.env ${v}`);
    }
    assert.ok(
      (project.env.ADMIN_TOKEN ?? '').length >= 16,
      'ADMIN_TOKEN has the length the gateway requires',
    );
  });

  it('when the OpenAI variables are not configured, then compose does not set them to empty strings', () => {
    const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    assert.doesNotMatch(
      text,
      /OPENAI_[A-Z_]+:/,
      'OPENAI_* only from .env, where unset means unset',
    );
  });
});
