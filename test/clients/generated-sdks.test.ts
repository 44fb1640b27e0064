// Generated clients, as a user makes them: from the document a running gateway serves, with
// openapi-typescript + openapi-fetch and with @hey-api/openapi-ts (its fetch client). In a
// throwaway project, a small program per generator (test/clients/programs/uses-*.ts) must
// type-check under `strict` and, run against the live stack, get every response variant of every
// operation (plan.ts; 503 after the upstream services are stopped).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_SCOPES } from '../support/stack.js';
import { EXPECTED, type Phase, type ProgramConfig, type Seen } from './programs/plan.js';
import {
  CLIENT_KB,
  ROOT,
  assertOk,
  run,
  startClientStack,
  removeDir,
  userProject,
  writeStrictTsconfig,
  type ClientStack,
} from './support/clients.js';

const PROGRAMS = ['uses-openapi-fetch.ts', 'uses-hey-api.ts'] as const;
type Program = (typeof PROGRAMS)[number];

let cs: ClientStack;
let project: string;
const configs = new Map<Program, Omit<ProgramConfig, 'phase'>>();

/** Monday of the current ISO week (UTC): a digest can be built for it at once. */
function mondayOfThisWeek(): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

/** Keys of their own per program: each uses up a deflection slot and a rate limit. */
async function keysFor(n: number): Promise<ProgramConfig['keys']> {
  const { stack } = cs;
  const fresh = await stack.orgWithKey(`fresh-${n}`, ALL_SCOPES, { deflection_monthly_limit: 1 });
  await stack.admin('POST', `/admin/v1/orgs/fresh-${n}/kb/entries`, CLIENT_KB);
  return {
    all: cs.key,
    fresh,
    readOnly: cs.readOnlyKey,
    writeOnly: await stack.keyFor('clients', ['tickets:write']),
    limited: await stack.orgWithKey(`limited-${n}`, ALL_SCOPES, {
      rate_limit_per_key_per_min: 1,
    }),
    unseen: await stack.orgWithKey(`unseen-${n}`),
  };
}

async function runProgram(program: Program, phase: Phase): Promise<Seen[]> {
  const result = assertOk(
    await run('npx', ['tsx', program], {
      cwd: project,
      env: { CLIENT_PROGRAM: JSON.stringify({ ...configs.get(program), phase }) },
    }),
    `${program} (${phase})`,
  );
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Seen[];
}

before(async () => {
  cs = await startClientStack('sdks');
  await cs.stack.admin('POST', '/admin/v1/orgs/clients/digests', {
    week_start: mondayOfThisWeek(),
  });
  for (const [n, program] of PROGRAMS.entries())
    configs.set(program, { url: cs.url, keys: await keysFor(n) });

  project = userProject('sdks');
  writeStrictTsconfig(project);

  for (const file of ['plan.ts', ...PROGRAMS]) {
    copyFileSync(join(ROOT, 'test/clients/programs', file), join(project, file));
  }
});

after(async () => {
  await cs?.stop();
  removeDir(project);
});

test('when clients are generated from the served document, then both generators succeed', async () => {
  const served = `${cs.url}/api/v1/agent/openapi.json`;
  assertOk(
    await run('npx', ['openapi-typescript', served, '-o', 'schema.d.ts'], { cwd: project }),
    'openapi-typescript',
  );
  // hey-api's configuration file, as its docs show it; `module.extension` makes the imports
  // NodeNext-style (it would look for a tsconfig.json beside its own install otherwise).
  writeFileSync(
    join(project, 'openapi-ts.config.js'),
    `export default {
  input: ${JSON.stringify(served)},
  output: { path: 'sdk', module: { extension: '.js' } },
  plugins: ['@hey-api/client-fetch'],
};
`,
  );
  assertOk(
    await run('npx', ['@hey-api/openapi-ts', '--no-log-file'], { cwd: project }),
    '@hey-api/openapi-ts',
  );
});

test('when the programs using them are type-checked (strict), then there is no error', async () => {
  const tsc = await run('npx', ['tsc', '-p', '.'], { cwd: project });
  assert.equal(tsc.code, 0, tsc.output);
});

test('when each program runs against the stack, then it sees every operation and response variant', async () => {
  for (const program of PROGRAMS) {
    assert.deepEqual(await runProgram(program, 'up'), EXPECTED.up, program);
  }
  for (const service of ['tickets', 'knowledge', 'answers', 'digest']) {
    await cs.stack.service(service).stop();
  }
  for (const program of PROGRAMS) {
    assert.deepEqual(await runProgram(program, 'down'), EXPECTED.down, program);
  }
});
