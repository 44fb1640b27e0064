#!/usr/bin/env node
// Regenerates packages/proto/src/gen from proto/ with buf + ts-proto.
// With --check, generates into a temp dir and fails if the committed code is stale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, cpSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const target = join(root, 'packages/proto/src/gen');
const check = process.argv.includes('--check');
const buf = join(root, 'node_modules/.bin/buf');

const out = mkdtempSync(join(tmpdir(), 'proto-gen-'));
const template = JSON.stringify({
  version: 'v2',
  plugins: [
    {
      local: ['node', join(root, 'node_modules/ts-proto/protoc-gen-ts_proto')],
      out,
      opt: readFileSync(join(root, 'buf.gen.yaml'), 'utf8')
        .split('\n')
        .filter((l) => /^\s+- \w+=/.test(l))
        .map((l) => l.trim().slice(2)),
    },
  ],
});
execFileSync(buf, ['generate', '--template', template], { cwd: root, stdio: 'inherit' });

function files(dir) {
  const list = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) list.push(...files(p));
    else list.push(p);
  }
  return list;
}

if (check) {
  const fresh = new Map(files(out).map((f) => [relative(out, f), readFileSync(f, 'utf8')]));
  const committed = new Map(
    files(target).map((f) => [relative(target, f), readFileSync(f, 'utf8')]),
  );
  const stale = [...new Set([...fresh.keys(), ...committed.keys()])].filter(
    (k) => fresh.get(k) !== committed.get(k),
  );
  rmSync(out, { recursive: true, force: true });
  if (stale.length) {
    console.error(`generated proto code is stale: ${stale.join(', ')}; run npm run proto`);
    process.exit(1);
  }
  console.log('generated proto code is up to date');
} else {
  rmSync(target, { recursive: true, force: true });
  cpSync(out, target, { recursive: true });
  rmSync(out, { recursive: true, force: true });
  console.log(`generated ${files(target).length} files into ${relative(root, target)}`);
}
