// The READMEs and docs/ link only to files of this repository (or to the web): a reader who
// cloned it must not meet links into a directory beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from './support/clients.js';

function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f));
  const services = readdirSync(join(ROOT, 'services'))
    .map((s) => join(ROOT, 'services', s, 'README.md'))
    .filter((f) => existsSync(f));
  return [join(ROOT, 'README.md'), ...docs, ...services];
}

test('when a README or a page under docs/ links to a file, then the file is in the repository', () => {
  const broken: string[] = [];
  for (const file of markdownFiles()) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target!)) continue;
      const path = resolve(dirname(file), decodeURI(target!.split('#')[0]!));
      const where = `${relative(ROOT, file)} → ${target}`;
      if (relative(ROOT, path).startsWith('..')) broken.push(`${where} (outside the repository)`);
      else if (!existsSync(path)) broken.push(`${where} (missing)`);
    }
  }
  assert.deepEqual(broken, []);
});
