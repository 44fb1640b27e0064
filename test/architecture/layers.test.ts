// The layer rule of eslint.config.js, run through ESLint's Node API on synthetic files: every
// service's domain/ fails lint when it imports its own data-access/, entry-points/, clients/,
// cli/ or the wiring (server.ts, main.ts, composition.ts), however the path is spelled, and
// the domain folders as they are pass.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint, type Linter } from 'eslint';
import { ROOT } from '../../scripts/validate-deploy.js';

const RULE = 'import-x/no-restricted-paths';
const eslint = new ESLint({ cwd: ROOT });

const services = readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(path.join(ROOT, 'services', e.name, 'src/domain')))
  .map((e) => e.name)
  .sort();

/** The first .ts file below dir (relative to it), or undefined. */
function firstTsFile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (entry.isFile() && entry.name.endsWith('.ts')) return entry.name;
    if (entry.isDirectory()) {
      const inner = firstTsFile(path.join(dir, entry.name));
      if (inner) return `${entry.name}/${inner}`;
    }
  }
  return undefined;
}

/** Lint messages of a synthetic file at services/<service>/src/<at> holding `code`. */
async function lint(service: string, at: string, code: string): Promise<Linter.LintMessage[]> {
  const [result] = await eslint.lintText(code, {
    filePath: path.join(ROOT, 'services', service, 'src', at),
  });
  return result!.messages;
}

/** What a domain file may not import, as imports spelled from src/domain/<file>. */
function forbiddenImports(service: string): string[] {
  const src = path.join(ROOT, 'services', service, 'src');
  const imports: string[] = [];
  for (const layer of ['data-access', 'entry-points', 'clients', 'cli']) {
    const file = firstTsFile(path.join(src, layer));
    if (file) imports.push(`../${layer}/${file.replace(/\.ts$/, '.js')}`);
  }
  for (const wiring of ['server.ts', 'main.ts', 'composition.ts']) {
    if (existsSync(path.join(src, wiring))) imports.push(`../${wiring.replace(/\.ts$/, '.js')}`);
  }
  return imports;
}

describe('layers: domain/ imports only domain/ (eslint.config.js)', () => {
  it('when the services are listed, then all five have a domain/ the rule covers', () => {
    assert.deepEqual(services, ['answers', 'digest', 'gateway', 'knowledge', 'tickets']);
  });

  for (const service of services) {
    describe(service, () => {
      it('when a domain file imports data-access/, entry-points/, cli/ or the wiring, then lint fails on each import', async () => {
        const imports = forbiddenImports(service);
        assert.ok(
          imports.some((i) => i.startsWith('../data-access/')),
          'has a data-access file',
        );
        assert.ok(
          imports.some((i) => i.startsWith('../entry-points/')),
          'has an entry point',
        );
        assert.ok(imports.includes('../server.js'), 'has server.ts');
        const code = imports.map((from, i) => `import * as m${i} from '${from}';`).join('\n');
        const messages = await lint(service, 'domain/layer-check.ts', `${code}\n`);
        const flagged = messages.filter((m) => m.ruleId === RULE).map((m) => m.line);
        assert.deepEqual(
          flagged,
          imports.map((_, i) => i + 1),
          `every forbidden import is flagged: ${JSON.stringify(messages)}`,
        );
        assert.ok(messages.every((m) => m.severity === 2));
      });

      it('when the forbidden path is spelled from a subfolder or with .ts resolution, then it is still caught', async () => {
        const [dataAccess] = forbiddenImports(service);
        const deeper = dataAccess!.replace(/^\.\.\//, '../../');
        const messages = await lint(
          service,
          'domain/nested/layer-check.ts',
          `import * as m from '${deeper}';\nimport * as s from '../../server.js';\n`,
        );
        assert.deepEqual(
          messages.filter((m) => m.ruleId === RULE).map((m) => m.line),
          [1, 2],
          JSON.stringify(messages),
        );
      });

      it('when a domain file imports another domain file or a package, then the rule is quiet', async () => {
        const sibling = firstTsFile(path.join(ROOT, 'services', service, 'src/domain'))!;
        const messages = await lint(
          service,
          'domain/layer-check.ts',
          `import * as d from './${sibling.replace(/\.ts$/, '.js')}';\n` +
            `import { AppError } from '@support-agent/shared';\n` +
            `export const used = [d, AppError];\n`,
        );
        assert.deepEqual(messages, []);
      });

      it('when a relative import in domain/ resolves to nothing, then lint fails (it cannot slip past the zones)', async () => {
        const messages = await lint(
          service,
          'domain/layer-check.ts',
          `import * as m from '../data-access/no-such-file.js';\nexport const used = m;\n`,
        );
        assert.ok(
          messages.some((m) => m.ruleId === 'import-x/no-unresolved'),
          JSON.stringify(messages),
        );
      });

      it('when another layer imports data-access/, then the domain rule does not apply to it', async () => {
        const [dataAccess] = forbiddenImports(service);
        const messages = await lint(
          service,
          'server-check.ts',
          `import * as m from '${dataAccess!.replace(/^\.\.\//, './')}';\nexport const used = m;\n`,
        );
        assert.deepEqual(
          messages.filter((m) => m.ruleId === RULE),
          [],
        );
      });
    });
  }

  it('when the domain folders are linted as they are, then no layer rule fires', async () => {
    const results = await eslint.lintFiles(services.map((s) => `services/${s}/src/domain`));
    const problems = results.flatMap((r) =>
      r.messages
        .filter((m) => m.ruleId === RULE || m.ruleId === 'import-x/no-unresolved')
        .map((m) => `${path.relative(ROOT, r.filePath)}:${m.line} ${m.message}`),
    );
    assert.deepEqual(problems, []);
    assert.ok(results.length >= services.length, 'domain files were linted');
  });
});
