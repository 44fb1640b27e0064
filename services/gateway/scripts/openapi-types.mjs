#!/usr/bin/env node
// Regenerates openapi/openapi.d.ts (TypeScript types of the public API) from
// openapi/openapi.json with openapi-typescript, formatted with the repository's Prettier settings.
// With --check, generates in memory and fails when the committed file is stale (run by
// `npm run lint:openapi`, like proto:check for the gRPC code).
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import * as prettier from 'prettier';

const source = new URL('../openapi/openapi.json', import.meta.url);
const target = fileURLToPath(new URL('../openapi/openapi.d.ts', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));
const check = process.argv.includes('--check');

const ast = await openapiTS(JSON.parse(readFileSync(source, 'utf8')), { silent: true });
const header =
  '// Generated from openapi.json by openapi-typescript: do not edit; run `npm run openapi:types`.\n';
const code = await prettier.format(header + astToString(ast), {
  ...(await prettier.resolveConfig(target)),
  parser: 'typescript',
});

const where = relative(root, target);
if (check) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (committed !== code) {
    console.error(`${where} is stale: run npm run openapi:types`);
    process.exit(1);
  }
  console.log(`${where} is up to date`);
} else {
  writeFileSync(target, code);
  console.log(`generated ${where}`);
}
