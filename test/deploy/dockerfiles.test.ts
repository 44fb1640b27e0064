// Policies on services/*/Dockerfile and .dockerignore, read statically (no Docker engine here):
// pinned multi-stage builds from the workspace lockfile, production-only node_modules of one
// workspace, non-root runtime running `node dist/main.js` as PID 1, health checks, OCI labels.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../../scripts/validate-deploy.js';
import { dockerfile } from './dockerfile.js';

const PORTS: Record<string, number> = {
  gateway: 8080,
  tickets: 50051,
  knowledge: 50052,
  answers: 50053,
  digest: 50054,
};

/** packages/<x> for each workspace package (other than shared and proto) a service depends on. */
function workspacePackages(service: string): string[] {
  const manifest = JSON.parse(
    readFileSync(path.join(ROOT, 'services', service, 'package.json'), 'utf8'),
  ) as { dependencies?: Record<string, string> };
  return Object.keys(manifest.dependencies ?? {})
    .filter((d) => d.startsWith('@support-agent/'))
    .map((d) => `packages/${d.slice('@support-agent/'.length)}`)
    .filter((p) => p !== 'packages/shared' && p !== 'packages/proto');
}

const serviceDirs = readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(path.join(ROOT, 'services', e.name, 'package.json')))
  .map((e) => e.name)
  .sort();

describe('Dockerfiles', () => {
  it('when a service exists, then it has a Dockerfile (and the tests know its port)', () => {
    assert.deepEqual(serviceDirs, Object.keys(PORTS).sort());
    for (const name of serviceDirs) {
      assert.ok(
        existsSync(path.join(ROOT, 'services', name, 'Dockerfile')),
        `services/${name}/Dockerfile`,
      );
    }
  });

  it('when a workspace is added, then it lives under packages/ or services/ (the manifests stage copies only those)', () => {
    const root = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      workspaces: string[];
    };
    for (const ws of root.workspaces) assert.match(ws, /^(packages|services)\/[^/]+$/, ws);
  });

  for (const name of Object.keys(PORTS)) {
    describe(`services/${name}/Dockerfile`, () => {
      const df = dockerfile(name);
      const all = df.stages.flatMap((s) => s.instructions);
      const runs = (stage: string) =>
        df.stages
          .find((s) => s.name === stage)
          ?.instructions.filter((i) => i.keyword === 'RUN')
          .map((i) => i.args)
          .join('\n') ?? '';

      it('when the base image is chosen, then it is node 20 bookworm-slim pinned to a patch release', () => {
        assert.match(df.globalArgs.NODE_IMAGE ?? '', /^node:20\.\d+\.\d+-bookworm-slim$/);
        for (const s of df.stages) assert.equal(s.from, '${NODE_IMAGE}', `stage ${s.name}`);
      });

      it('when it builds, then npm ci uses the lockfile without install scripts and tsc builds only this service', () => {
        assert.ok(df.stages.length >= 3, 'multi-stage');
        assert.match(runs('build'), /npm ci --ignore-scripts/);
        assert.match(runs('build'), new RegExp(`tsc -b services/${name}(\\s|$)`));
        assert.match(
          runs('deps'),
          new RegExp(`npm ci --omit=dev --ignore-scripts .*--workspace services/${name}(\\s|$)`),
          'production dependencies of this workspace only',
        );
      });

      it('when the runtime image is assembled, then it holds node_modules and the built shared, proto, the other packages it depends on and service', () => {
        const copies = df.runtime.stage.instructions
          .filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from='))
          .map((i) => i.args);
        const expected = [
          '--from=deps /app/node_modules ./node_modules',
          ...[
            'packages/shared',
            'packages/proto',
            ...workspacePackages(name),
            `services/${name}`,
          ].flatMap((p) => [
            `--from=deps /app/${p}/node_modules ./${p}/node_modules`,
            `--from=build /app/${p}/package.json ./${p}/`,
            `--from=build /app/${p}/dist ./${p}/dist`,
          ]),
        ];
        for (const copy of expected) assert.ok(copies.includes(copy), `COPY ${copy}`);
        // Anything else a service reads at runtime (e.g. the gateway's OpenAPI document) comes
        // from its own folder of the build stage, never from another workspace's sources.
        for (const copy of copies.filter((c) => !expected.includes(c))) {
          assert.match(
            copy,
            new RegExp(`^--from=build /app/services/${name}/\\S+ \\./services/${name}/`),
            copy,
          );
        }
        assert.equal(df.runtime.env.NODE_ENV, 'production');
      });

      it('when the container starts, then node runs dist/main.js as PID 1 as a non-root user', () => {
        assert.deepEqual(df.runtime.cmd, ['node', 'dist/main.js']);
        assert.equal(df.runtime.entrypoint, undefined, 'no ENTRYPOINT wrapper (node is PID 1)');
        assert.ok(
          ['1000', '1000:1000', 'node'].includes(df.runtime.user ?? ''),
          `USER ${df.runtime.user}`,
        );
        const workdir = df.runtime.stage.instructions
          .filter((i) => i.keyword === 'WORKDIR')
          .at(-1)?.args;
        assert.equal(workdir, `/app/services/${name}`);
        for (const i of df.runtime.stage.instructions.filter((x) =>
          ['CMD', 'ENTRYPOINT'].includes(x.keyword),
        )) {
          assert.doesNotMatch(i.args, /\bnpm\b/, 'no npm at runtime');
        }
      });

      it('when it is health-checked, then gRPC health (or the gateway /readyz) is asked on the service port', () => {
        const [bin, flag, code] = df.runtime.healthcheck;
        assert.equal(bin, 'node');
        assert.equal(flag, '-e');
        const port = PORTS[name]!;
        if (name === 'gateway') {
          assert.match(code ?? '', new RegExp(`fetch\\('http://127\\.0\\.0\\.1:${port}/readyz'`));
          assert.equal(df.runtime.env.PORT, String(port));
        } else {
          assert.match(code ?? '', new RegExp(`checkHealth\\('127\\.0\\.0\\.1:${port}'`));
          const addr = Object.entries(df.runtime.env).find(([k]) => k.endsWith('_ADDR'));
          assert.equal(
            addr?.[1],
            `0.0.0.0:${port}`,
            'listens on all interfaces, on the checked port',
          );
        }
        assert.ok(
          df.runtime.expose.includes(port) && df.runtime.expose.includes(9464),
          'EXPOSE port and metrics',
        );
      });

      it('when it is published, then it carries OCI labels', () => {
        for (const label of ['title', 'description', 'version', 'revision', 'source']) {
          assert.ok(`org.opencontainers.image.${label}` in df.runtime.labels, label);
        }
        assert.equal(df.runtime.labels['org.opencontainers.image.title'], `support-agent-${name}`);
      });

      it('when it is built, then it never uses a floating image tag', () => {
        for (const i of all) assert.doesNotMatch(i.args, /:latest\b/);
      });
    });
  }
});

describe('.dockerignore', () => {
  it('when the build context is sent, then dependencies, builds, data, git, secrets and tests stay out', () => {
    const patterns = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const p of [
      '**/node_modules',
      '**/dist',
      'data',
      '.git',
      '.env',
      'test',
      'services/*/test',
    ]) {
      assert.ok(patterns.includes(p), `.dockerignore excludes ${p}`);
    }
    for (const needed of [
      'packages',
      'services',
      'deploy',
      'deploy/bootstrap',
      'package-lock.json',
    ]) {
      assert.ok(!patterns.includes(needed), `.dockerignore keeps ${needed}`);
    }
  });
});
