#!/usr/bin/env node
// Regenerates packages/proto/src/gen from proto/ with protoc (Debian's
// protobuf-compiler) and the ts-proto plugin.
// With --check, generates into a temp dir and fails if the committed code is stale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, cpSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const protoDir = join(root, 'proto');
const target = join(root, 'packages/proto/src/gen');
const check = process.argv.includes('--check');

// ts-proto options: grpc-js services, numbers for int64, ESM imports with .js suffixes.
const OPTIONS = [
  'outputServices=grpc-js',
  'esModuleInterop=true',
  'env=node',
  'forceLong=number',
  'importSuffix=.js',
  'useOptionals=none',
  'snakeToCamel=true',
];

function files(dir) {
  const list = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) list.push(...files(p));
    else list.push(p);
  }
  return list.sort();
}

const out = mkdtempSync(join(tmpdir(), 'proto-gen-'));
try {
  execFileSync(
    'protoc',
    [
      `--plugin=protoc-gen-ts_proto=${join(root, 'node_modules/ts-proto/protoc-gen-ts_proto')}`,
      `--ts_proto_out=${out}`,
      `--ts_proto_opt=${OPTIONS.join(',')}`,
      `-I${protoDir}`,
      ...files(protoDir)
        .filter((f) => f.endsWith('.proto'))
        .map((f) => relative(protoDir, f)),
    ],
    { cwd: root, stdio: 'inherit' },
  );
} catch (err) {
  if (err.code === 'ENOENT') {
    console.error('protoc not found: apt-get install protobuf-compiler');
    process.exit(1);
  }
  throw err;
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
