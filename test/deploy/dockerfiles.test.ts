// Policies on the repository's one Dockerfile (a target per service) and .dockerignore, read
// statically: pinned multi-stage builds from the workspace lockfile, production-only
// node_modules of one workspace per image, no package manager and no TypeScript in an image,
// non-root runtime running `node dist/main.js` as PID 1, a health check that follows the
// configured ports, no port baked in, OCI labels, build secrets for npm. (`npm run
// images:smoke` builds and runs the images for real.)
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../../scripts/validate-deploy.js';
import { dockerfile, readDockerfile } from './dockerfile.js';

const PORTS: Record<string, number> = {
  gateway: 8080,
  tickets: 50051,
  knowledge: 50052,
  answers: 50053,
  digest: 50054,
};

const serviceDirs = readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(path.join(ROOT, 'services', e.name, 'package.json')))
  .map((e) => e.name)
  .sort();

/** Every Dockerfile in the repository outside dependencies and build output. */
function dockerfilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory())
      return ['node_modules', 'dist', '.git'].includes(e.name) ? [] : dockerfilesUnder(full);
    return /^Dockerfile(\..+)?$|\.Dockerfile$/.test(e.name) ? [path.relative(ROOT, full)] : [];
  });
}

describe('Dockerfile', () => {
  const df = readDockerfile();
  const stage = (name: string) => df.stages.find((s) => s.name === name);
  const runs = (name: string) =>
    stage(name)
      ?.instructions.filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n') ?? '';

  it('when the images are built, then one Dockerfile at the root builds them all', () => {
    assert.deepEqual(dockerfilesUnder(ROOT), ['Dockerfile']);
  });

  it('when a service exists, then the Dockerfile has a target named for it (and the tests know its port)', () => {
    assert.deepEqual(serviceDirs, Object.keys(PORTS).sort());
    for (const name of serviceDirs) assert.ok(stage(name), `target ${name}`);
  });

  it('when a workspace is added, then it lives under packages/ or services/ (the manifests stage copies only those)', () => {
    const root = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      workspaces: string[];
    };
    for (const ws of root.workspaces) assert.match(ws, /^(packages|services)\/[^/]+$/, ws);
  });

  it('when the base image is chosen, then it is node 20 bookworm-slim pinned to a patch release', () => {
    assert.match(df.globalArgs.NODE_IMAGE ?? '', /^node:20\.\d+\.\d+-bookworm-slim$/);
    const names = new Set<string>();
    for (const s of df.stages) {
      // A stage starts from the pinned image, from an earlier stage, or (files only) from scratch.
      assert.ok(
        s.from === '${NODE_IMAGE}' || s.from === 'scratch' || names.has(s.from),
        `stage ${s.name} FROM ${s.from}`,
      );
      if (s.name) names.add(s.name);
    }
  });

  it('when it builds, then npm ci uses the lockfile without install scripts and tsc builds every service once', () => {
    assert.ok(df.stages.length >= 3, 'multi-stage');
    assert.match(runs('build'), /npm ci --ignore-scripts/);
    // `tsc -b services/*`: every service folder, whichever services there are.
    assert.match(runs('build'), /tsc -b services\/\*$/m);
  });

  it('when dependencies are installed for the images, then each service gets the production dependencies of its own workspace only', () => {
    const deps = runs('deps');
    assert.match(deps, /for dir in services\/\*\/; do/, 'one install per service folder');
    assert.match(
      deps,
      /npm ci --omit=dev --ignore-scripts .*--workspace "services\/\$\{service\}"/,
      'production dependencies of that workspace only',
    );
    assert.match(deps, /\/deps\/\$\{service\}/, 'kept apart per service');
    assert.match(deps, /set -e/, 'a failed install fails the build');
  });

  it('when the built packages are gathered, then the packages stage holds shared, proto and events with their package.json', () => {
    const copies = stage('packages')!.instructions.filter((i) => i.keyword === 'COPY');
    for (const p of ['packages/shared', 'packages/proto', 'packages/events']) {
      for (const copy of [
        `--from=build /app/${p}/package.json /${p}/`,
        `--from=build /app/${p}/dist /${p}/dist`,
      ]) {
        assert.ok(
          copies.some((c) => c.args === copy),
          `COPY ${copy}`,
        );
      }
    }
  });

  for (const name of Object.keys(PORTS)) {
    describe(`target ${name}`, () => {
      const { runtime } = dockerfile(name);

      it('when the runtime image is assembled, then it holds its node_modules and the built shared, proto and service', () => {
        const expected = [
          `--from=deps /deps/${name}/ ./`,
          '--from=packages /packages ./packages',
          `--from=build /app/services/${name}/package.json ./services/${name}/`,
          `--from=build /app/services/${name}/dist ./services/${name}/dist`,
        ];
        for (const copy of expected) assert.ok(runtime.stageCopies.includes(copy), `COPY ${copy}`);
        // Anything else a service reads at runtime (e.g. the gateway's OpenAPI document) comes
        // from its own folder of the build stage, never from another workspace's sources.
        const own = runtime.stage.instructions
          .filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from='))
          .map((i) => i.args);
        for (const copy of own.filter((c) => !expected.includes(c))) {
          assert.match(
            copy,
            new RegExp(`^--from=build /app/services/${name}/\\S+ \\./services/${name}/`),
            copy,
          );
        }
        assert.equal(runtime.env.NODE_ENV, 'production');
        assert.equal(runtime.chain[0]!.name, 'runtime', 'built on the runtime stage');
      });

      it('when the container starts, then node runs dist/main.js as PID 1 as a non-root user', () => {
        assert.deepEqual(runtime.cmd, ['node', 'dist/main.js']);
        assert.equal(runtime.entrypoint, undefined, 'no ENTRYPOINT wrapper (node is PID 1)');
        assert.ok(
          ['1000', '1000:1000', 'node'].includes(runtime.user ?? ''),
          `USER ${runtime.user}`,
        );
        assert.equal(runtime.workdir, `/app/services/${name}`);
        for (const i of runtime.chain.flatMap((s) => s.instructions)) {
          if (['CMD', 'ENTRYPOINT'].includes(i.keyword)) {
            assert.doesNotMatch(i.args, /\bnpm\b/, 'no npm at runtime');
          }
        }
      });

      it('when it is health-checked, then the probe asks the service at the address its own config gives (no literal port)', () => {
        assert.deepEqual(runtime.healthcheck, ['node', '/app/healthcheck.mjs', name]);
        assert.ok(
          runtime.copies.includes('deploy/healthcheck/healthcheck.mjs /app/healthcheck.mjs'),
          'the probe is in the image',
        );
        assert.ok(
          runtime.expose.includes(PORTS[name]!) && runtime.expose.includes(9464),
          'EXPOSE documents the default port and metrics',
        );
      });

      it('when the image runs, then no port or listen address is baked in (the code has the defaults)', () => {
        const baked = Object.keys(runtime.env).filter((k) =>
          /PORT|_ADDR$|^HOST$|_HOST$|_URL$/.test(k),
        );
        assert.deepEqual(baked, [], 'PORT_BASE and explicit variables work as under npm start');
      });

      it('when it is published, then it carries OCI labels', () => {
        for (const label of [
          'title',
          'description',
          'version',
          'revision',
          'source',
          'base.name',
        ]) {
          assert.ok(`org.opencontainers.image.${label}` in runtime.labels, label);
        }
        assert.equal(runtime.labels['org.opencontainers.image.title'], `support-agent-${name}`);
      });
    });
  }

  it('when the runtime is assembled, then the package managers are removed before the base files are taken, so no lower layer holds them', () => {
    const removal = runs('base-files');
    for (const p of [
      '/usr/local/lib/node_modules/npm',
      '/usr/local/lib/node_modules/corepack',
      '/usr/local/bin/npm',
      '/usr/local/bin/npx',
    ]) {
      assert.ok(removal.includes(p), `base-files removes ${p}`);
    }
    assert.equal(stage('base-files')?.from, '${NODE_IMAGE}');
    const runtime = stage('runtime')!;
    assert.equal(runtime.from, 'scratch', 'no layer of the base below the runtime files');
    assert.equal(runtime.instructions[0]?.args, '--from=base-files / /');
    assert.match(
      runtime.instructions.find((i) => i.keyword === 'ENV')?.args ?? '',
      /PATH=\/usr\/local\/sbin:\/usr\/local\/bin:/,
    );
  });

  it('when production dependencies are kept, then TypeScript (a peer dependency of the Qdrant client) is not', () => {
    assert.match(runs('deps'), /rm -rf node_modules\/typescript /);
  });

  it('when npm runs in the build, then the build secrets npm_ca and npmrc are mounted (a CA bundle or a whole .npmrc)', () => {
    for (const name of ['build', 'deps']) {
      const npmRuns = stage(name)!.instructions.filter(
        (i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args),
      );
      assert.ok(npmRuns.length > 0, name);
      for (const run of npmRuns) {
        assert.match(run.args, /--mount=type=secret,id=npm_ca /);
        assert.match(run.args, /--mount=type=secret,id=npmrc /);
        assert.match(
          run.args,
          /if \[ -s \/run\/secrets\/npm_ca \]; then export NODE_EXTRA_CA_CERTS=\/run\/secrets\/npm_ca; fi;/,
        );
        assert.match(
          run.args,
          /if \[ -s \/run\/secrets\/npmrc \]; then export NPM_CONFIG_USERCONFIG=\/run\/secrets\/npmrc; fi;/,
        );
      }
    }
  });

  it('when it is built, then it never uses a floating image tag', () => {
    for (const i of df.stages.flatMap((s) => s.instructions)) {
      assert.doesNotMatch(i.args, /:latest\b/);
    }
  });
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
