// No import cycles between files, anywhere in the repository (scripts/import-cycles.ts): the
// check itself on small synthetic trees, then on the repository as it is.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cycles, importGraph, ROOT } from '../../scripts/import-cycles.js';

/** A throwaway tree of files (path → text); returns its root. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'import-cycles-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

describe('import cycles (scripts/import-cycles.ts)', () => {
  const roots: string[] = [];
  after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
  const found = (files: Record<string, string>) => {
    const root = tree(files);
    roots.push(root);
    return cycles(importGraph(root)).map((c) => c.map((f) => path.relative(root, f)));
  };

  it('when two files import each other (one for a type only), then the pair is reported', () => {
    assert.deepEqual(
      found({
        'a/match.ts': "import type { Terms } from './vocabulary.js';\nexport const m = 1;\n",
        'a/vocabulary.ts': "import { m } from './match.js';\nexport type Terms = typeof m;\n",
        'a/other.ts': "import { m } from './match.js';\n",
      }),
      [['a/match.ts', 'a/vocabulary.ts']],
    );
  });

  it('when a cycle runs through a workspace entry point, then it is reported across workspaces', () => {
    assert.deepEqual(
      found({
        'packages/lab/package.json': JSON.stringify({
          name: '@support-agent/lab',
          exports: { '.': { default: './dist/index.js' } },
        }),
        'packages/lab/src/index.ts': "export * from '@support-agent/svc/search';\n",
        'services/svc/package.json': JSON.stringify({
          name: '@support-agent/svc',
          exports: { './search': { default: './dist/exports/search.js' } },
        }),
        'services/svc/src/exports/search.ts': "export { s } from '../domain/search.js';\n",
        'services/svc/src/domain/search.ts': "import '@support-agent/lab';\nexport const s = 1;\n",
      }),
      [
        [
          'packages/lab/src/index.ts',
          'services/svc/src/domain/search.ts',
          'services/svc/src/exports/search.ts',
        ],
      ],
    );
  });

  it('when imports form a chain or a diamond, then nothing is reported', () => {
    assert.deepEqual(
      found({
        'top.ts': "import './left.js';\nimport './right.js';\n",
        'left.ts': "import './bottom.js';\n",
        'right.ts': "export * from './bottom.js';\n",
        'bottom.ts': 'export const b = 1;\n',
      }),
      [],
    );
  });

  it('when the repository is checked, then no file takes part in an import cycle', () => {
    const graph = importGraph(ROOT);
    assert.ok(graph.size > 400, `${graph.size} files`);
    assert.deepEqual(
      cycles(graph).map((c) => c.map((f) => path.relative(ROOT, f))),
      [],
    );
  });
});
