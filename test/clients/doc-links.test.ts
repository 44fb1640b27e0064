// The READMEs and docs/ link only to files of this repository (or to the web): a reader who
// cloned it must not meet links into a directory beside it. The pages a user reads (READMEs,
// SECURITY.md, docs/ outside the lab notebook docs/lab/) speak of the product, not of how it
// was built: no issue numbers, no work rounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from './support/clients.js';

const markdownIn = (dir: string): string[] =>
  existsSync(join(ROOT, dir))
    ? readdirSync(join(ROOT, dir))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(ROOT, dir, f))
    : [];

const readmes = (group: string): string[] =>
  readdirSync(join(ROOT, group))
    .map((s) => join(ROOT, group, s, 'README.md'))
    .filter((f) => existsSync(f));

/** The pages a user reads: the front door, security policy, docs/ and each workspace's README. */
function userPages(): string[] {
  return [
    join(ROOT, 'README.md'),
    join(ROOT, 'SECURITY.md'),
    ...markdownIn('docs'),
    ...readmes('services'),
    ...readmes('packages'),
  ];
}

function markdownFiles(): string[] {
  return [...userPages(), ...markdownIn('docs/lab')];
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

/** How the history of the work shows in text: issue numbers, stops and rounds of work. */
const WORK_HISTORY = [
  /\bissues?\s+#?\d+/i,
  /(^|[\s(])#\d+\b/,
  /\bstops?\s+\d+\b/i,
  /\b(this|that|the latest|the last|the previous|the next|earlier|later|previous|every|each) work rounds?\b/i,
  /\b(this|the latest|the previous|the next|earlier|later|previous) rounds?\b/i,
  /\bround\s+\d+\b/i,
  /\b\w+ rounds? (ago|earlier|before)\b/i,
  /\bthis (stop|session|work)\b/i,
];

test('when a user page is read, then it names no issue numbers or work rounds (history lives in docs/lab/)', () => {
  const found: string[] = [];
  for (const file of userPages()) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const pattern of WORK_HISTORY) {
          const m = line.match(pattern);
          if (m) found.push(`${relative(ROOT, file)}:${i + 1}: "${m[0].trim()}"`);
        }
      });
  }
  assert.deepEqual(found, []);
});

test('when the lab notebook exists, then its index lists every entry', () => {
  const entries = markdownIn('docs/lab')
    .map((f) => relative(join(ROOT, 'docs/lab'), f))
    .filter((f) => f !== 'README.md');
  assert.ok(entries.length > 0, 'docs/lab/ holds dated entries');
  const index = readFileSync(join(ROOT, 'docs/lab/README.md'), 'utf8');
  for (const entry of entries) {
    assert.match(entry, /^\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md$/, `${entry}: dated name`);
    assert.ok(index.includes(`(${entry})`), `docs/lab/README.md links ${entry}`);
  }
});
