// The workspace boundary of eslint.config.js, run through ESLint's Node API on synthetic files:
// a path into another workspace's folder fails lint from anywhere (the root's scripts, bench and
// tests, another workspace's tests), its package name and `exports` entries pass, and a
// workspace may use the root's test and bench harness but nothing else of the root package.
// Then each workspace's `exports`: present, and every entry built.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint, type Linter } from 'eslint';
import { ROOT } from '../../scripts/import-cycles.js';

const RULE = 'import-x/no-restricted-paths';
const eslint = new ESLint({ cwd: ROOT });

const workspaces = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }
).workspaces;

interface Manifest {
  name: string;
  main?: string;
  exports?: Record<string, { types?: string; default?: string }>;
}
const manifest = (ws: string): Manifest =>
  JSON.parse(readFileSync(path.join(ROOT, ws, 'package.json'), 'utf8')) as Manifest;

/** Lines of a synthetic file at `at` (repository-relative) flagged by the boundary rule. */
async function flagged(at: string, imports: string[]): Promise<number[]> {
  const code = imports.map((from, i) => `import * as m${i} from '${from}';`).join('\n');
  const used = `export const used = [${imports.map((_, i) => `m${i}`).join(', ')}];`;
  const [result] = await eslint.lintText(`${code}\n${used}\n`, {
    filePath: path.join(ROOT, at),
  });
  const messages: Linter.LintMessage[] = result!.messages;
  assert.deepEqual(
    messages.filter((m) => m.ruleId !== RULE),
    [],
    'only the boundary rule speaks (every import resolves)',
  );
  return messages.map((m) => m.line);
}

describe('workspace boundaries (eslint.config.js)', () => {
  it('when the root scripts, bench or tests import a workspace file by path, then lint fails on each', async () => {
    const into = [
      '../services/knowledge/src/domain/rerank.js',
      '../services/answers/src/domain/confidence.js',
      '../services/digest/src/server.js',
      '../packages/quality/src/retrieval-metrics.js',
      '../packages/shared/src/index.js',
      '../services/knowledge/dist/domain/rerank.js',
    ];
    for (const area of ['scripts', 'bench']) {
      assert.deepEqual(await flagged(`${area}/boundary-check.ts`, into), [1, 2, 3, 4, 5, 6], area);
    }
    const fromTests = into.map((p) => `../${p}`);
    assert.deepEqual(await flagged('test/e2e/boundary-check.ts', fromTests), [1, 2, 3, 4, 5, 6]);
  });

  it('when a workspace test imports another workspace by path, then lint fails; its own src passes', async () => {
    assert.deepEqual(
      await flagged('services/knowledge/test/boundary-check.ts', [
        '../../answers/src/domain/confidence.js',
        '../../../packages/quality/src/logistic-fit.js',
        '../src/domain/rerank.js',
      ]),
      [1, 2],
    );
  });

  it('when the same code is imported through package names and exports, then lint passes', async () => {
    const byName = [
      '@support-agent/knowledge/search',
      '@support-agent/answers/confidence',
      '@support-agent/digest/grouping',
      '@support-agent/quality',
      '@support-agent/shared',
    ];
    assert.deepEqual(await flagged('scripts/boundary-check.ts', byName), []);
    assert.deepEqual(await flagged('services/knowledge/test/boundary-check.ts', byName), []);
  });

  it('when a workspace imports the root harness, then lint passes; any other root code fails', async () => {
    assert.deepEqual(
      await flagged('services/knowledge/test/boundary-check.ts', [
        '../../../test/support/backends.js',
        '../../../bench/synthetic-kb.js',
        '../../../bench/lib/measure.js',
        '../../../scripts/lib/labelled-set.js',
        '../../../test/e2e/tickets.e2e.test.js',
        '../../../bench/run.js',
      ]),
      [4, 5, 6],
    );
  });

  it('when a workspace is listed, then its package.json exposes entry points through exports, each one built', () => {
    assert.ok(workspaces.length >= 9, workspaces.join());
    for (const ws of workspaces) {
      const pkg = manifest(ws);
      assert.ok(pkg.exports && Object.keys(pkg.exports).length > 0, `${ws}: exports`);
      // With exports, main is ignored by Node: one declaration of the entry points, not two.
      assert.equal(pkg.main, undefined, `${ws}: main`);
      for (const [entry, target] of Object.entries(pkg.exports)) {
        if (entry.includes('*')) continue;
        for (const file of [target.types, target.default]) {
          if (file) assert.ok(existsSync(path.join(ROOT, ws, file)), `${ws} ${entry}: ${file}`);
        }
      }
    }
  });

  it('when the services are listed, then the rule knows every one of them', () => {
    const services = readdirSync(path.join(ROOT, 'services')).sort();
    assert.deepEqual(
      services.map((s) => `services/${s}`),
      workspaces.filter((w) => w.startsWith('services/')).sort(),
    );
  });
});

describe('the quality lab (packages/quality) stays out of the services', () => {
  const services = workspaces.filter((w) => w.startsWith('services/'));

  it('when a service declares its production dependencies, then @support-agent/quality is not one', () => {
    for (const ws of services) {
      const pkg = JSON.parse(readFileSync(path.join(ROOT, ws, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      assert.ok(!('@support-agent/quality' in (pkg.dependencies ?? {})), ws);
    }
  });

  it('when a service’s runtime code is read, then none of it imports @support-agent/quality', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) walk(full);
        else if (
          /\.ts$/.test(e.name) &&
          /['"]@support-agent\/quality['"/]/.test(readFileSync(full, 'utf8'))
        )
          offenders.push(path.relative(ROOT, full));
      }
    };
    for (const ws of services) walk(path.join(ROOT, ws, 'src'));
    assert.deepEqual(offenders, []);
  });

  it('when the images gather the built packages, then packages/quality is not among them', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    assert.ok(
      !/packages\/quality/.test(dockerfile),
      'the Dockerfile never copies packages/quality',
    );
    // The manifests stage copies every package.json (for npm ci); the images take their
    // packages from the `packages` stage, which lists the runtime ones by name.
    assert.match(
      dockerfile,
      /FROM scratch AS packages\n(COPY --from=build \/app\/packages\/(shared|proto|events)\/\S* \S+\n)+/,
    );
  });
});
