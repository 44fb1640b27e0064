// The admin CLI's knowledge, digest and usage commands (built: `npx tsc -b services/gateway`)
// against an embedded gateway with canned upstreams. The CLI's stdout is a pipe here, so it
// prints one line per batch instead of a progress bar.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { NOT_A_MONDAY, REJECTED_QUESTION, type FakeUpstreams } from './support/fake-upstreams.js';
import {
  createOrg,
  startGateway,
  startGatewayBackends,
  type GatewayBackends,
  type TestGateway,
} from './support/gateway.js';

const CLI = fileURLToPath(new URL('../dist/cli/admin.js', import.meta.url));

let backends: GatewayBackends;
let upstreams: FakeUpstreams;
let gw: TestGateway;
let dataDir: string;
let filesDir: string;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, ADMIN_URL: gw.adminBase, DATA_DIR: dataDir };
  delete env.ADMIN_TOKEN;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function file(name: string, content: string): string {
  const p = path.join(filesDir, name);
  writeFileSync(p, content);
  return p;
}

const newOrg = () => createOrg(gw, 'cli', 'CLI');

const jsonl = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, question: `What is ${id}?`, answer: `It is ${id}.`, ...extra });

before(async () => {
  assert.ok(existsSync(CLI), `${CLI} missing: run \`npx tsc -b services/gateway\` first`);
  backends = await startGatewayBackends('gw-cli-kb', { embedded: true });
  ({ upstreams, dataDir } = backends);
  filesDir = mkdtempSync(path.join(os.tmpdir(), 'gw-cli-kb-files-'));
  gw = await startGateway(backends.env);
});

after(async () => {
  await gw?.stop();
  await backends?.stop();
  rmSync(filesDir, { recursive: true, force: true });
});

describe('kb import', () => {
  it('when a JSONL file has bad rows, then it prints batches, the summary and the failed source lines, and exits 2', async () => {
    const org = await newOrg();
    const source = file(
      'mixed.jsonl',
      [
        jsonl('a'), // 1
        '', // 2
        jsonl('b', { answer: '' }), // 3
        '{"id": "c", ', // 4
        jsonl('d'), // 5
        jsonl('e', { question: REJECTED_QUESTION }), // 6
        '  ', // 7
        jsonl('f'), // 8
        jsonl('g', { tags: ['x', 'y'] }), // 9
      ].join('\n') + '\n',
    );
    const res = await cli(['kb', 'import', org, source, '--batch', '2']);
    assert.equal(res.code, 2, res.stderr);
    const out = res.stdout.trimEnd().split('\n');
    // Seven non-blank rows in batches of two.
    assert.deepEqual(out.slice(0, 4), [
      'batch 1: 2 rows (lines 1-3): inserted 1, updated 0, failed 1',
      'batch 2: 2 rows (lines 4-5): inserted 1, updated 0, failed 1',
      'batch 3: 2 rows (lines 6-8): inserted 1, updated 0, failed 1',
      'batch 4: 1 rows (lines 9-9): inserted 1, updated 0, failed 0',
    ]);
    assert.deepEqual(out.slice(4), [
      'inserted 4, updated 0, failed 3',
      '  line 3: answer is required',
      '  line 4: not valid JSON',
      '  line 6: question was refused by the knowledge service',
    ]);
    assert.deepEqual([...upstreams.kb.get(org)!.keys()].sort(), ['a', 'd', 'f', 'g']);
    assert.deepEqual(upstreams.kb.get(org)!.get('g')!.tags, ['x', 'y']);

    const again = await cli(['kb', 'import', org, source, '--batch', '2']);
    assert.equal(again.code, 2);
    assert.match(again.stdout, /^inserted 0, updated 4, failed 3$/m);
  });

  it('when every row imports, then it exits 0; importing again reports them all as updated', async () => {
    const org = await newOrg();
    const rows = Array.from({ length: 1200 }, (_, i) => jsonl(`entry-${i}`));
    const source = file('clean.ndjson', `${rows.join('\r\n')}\r\n`);
    const first = await cli(['kb', 'import', org, source]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^batch 3: 200 rows \(lines 1001-1200\)/m);
    assert.match(first.stdout, /^inserted 1200, updated 0, failed 0$/m);
    const second = await cli(['kb', 'import', org, source, '--no-progress']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^inserted 0, updated 1200, failed 0$/m);
    const count = await cli(['kb', 'count', org]);
    assert.equal(count.stdout.trim(), `1200 KB entries in ${org}`);
  });

  it('when a CSV file is imported, then tags split on | and ;, and failed lines count the header', async () => {
    const org = await newOrg();
    const source = file(
      'kb.csv',
      [
        '\uFEFFID,Question,Answer,Tags,Notes', // 1
        'pw,How do I reset my password?,Use the reset link.,account|password; security,x', // 2
        '', // 3
        'multi,"A question', // 4
        'over two lines?","An answer, with a comma', // 5
        'and a ""quote"""', // 6
        'no-answer,Where is it?,,', // 7
        ' spaced ,Trimmed id?,Yes.', // 8
        ',,,', // 9: blank row, skipped
        'bad id,Q?,A.', // 10
      ].join('\n') + '\n',
    );
    const res = await cli(['kb', 'import', org, source]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stdout, /^batch 1: 5 rows \(lines 2-10\): inserted 3, updated 0, failed 2$/m);
    assert.ok(
      res.stdout.endsWith(
        [
          'inserted 3, updated 0, failed 2',
          '  line 7: answer is required',
          "  line 10: id may hold only letters, digits, '.', '_', ':' and '-', starting with a letter or digit",
          '',
        ].join('\n'),
      ),
      res.stdout,
    );
    const kb = upstreams.kb.get(org)!;
    assert.deepEqual(kb.get('pw')!.tags, ['account', 'password', 'security']);
    assert.equal(kb.get('multi')!.question, 'A question\nover two lines?');
    assert.equal(kb.get('multi')!.answer, 'An answer, with a comma\nand a "quote"');
    assert.deepEqual(kb.get('spaced')!.tags, []);

    const again = await cli(['kb', 'import', org, source, '--format', 'csv']);
    assert.match(again.stdout, /^inserted 0, updated 3, failed 2$/m);
  });

  it('when a JSON array file is imported, then failures name the line and the item', async () => {
    const org = await newOrg();
    const source = file(
      'kb.json',
      `[\n  ${jsonl('one')},\n  {\n    "id": "two",\n    "question": "Q?"\n  },\n  ${jsonl('three')}\n]\n`,
    );
    const res = await cli(['kb', 'import', org, source]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(
      res.stdout,
      /^inserted 2, updated 0, failed 1\n {2}line 3 \(item 2\): answer is required\n$/m,
    );
  });

  it('when --json is given, then stdout holds only the result and batch lines go to stderr', async () => {
    const org = await newOrg();
    const source = file('json-out.jsonl', `${jsonl('a')}\n${jsonl('b', { answer: ' ' })}\n`);
    const res = await cli(['--json', 'kb', 'import', org, source]);
    assert.equal(res.code, 2);
    assert.deepEqual(JSON.parse(res.stdout), {
      inserted: 1,
      updated: 0,
      failed: [{ line: 2, message: 'answer is required' }],
    });
    assert.match(res.stderr, /^batch 1: 2 rows/);
  });

  it('when the import cannot run, then it exits 1 with the reason', async () => {
    const org = await newOrg();
    const good = file('good.jsonl', `${jsonl('a')}\n`);
    const cases: Array<[string[], RegExp]> = [
      [['kb', 'import', 'no-such-org', good], /organization no-such-org not found \(not_found\)/],
      [['kb', 'import', org, path.join(filesDir, 'missing.jsonl')], /cannot read .*ENOENT/],
      [['kb', 'import', org, file('bad-header.csv', 'key,text\n1,2\n')], /must name the columns/],
      [
        ['kb', 'import', org, file('broken.csv', 'id,question,answer\na,"open,b\n')],
        /not valid CSV/,
      ],
      [['kb', 'import', org, file('broken.json', '[{"id": "a"},\n')], /unexpected end of file/],
      [['kb', 'import', org, file('what.txt', 'id;question\n')], /give --format/],
      [['kb', 'import', org, good, '--format', 'xml'], /Allowed choices are jsonl, csv, json/],
      [['kb', 'import', org, good, '--batch', '0'], /from 1 to 10000/],
    ];
    for (const [args, message] of cases) {
      const res = await cli(args);
      assert.equal(res.code, 1, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
      assert.match(res.stderr, message, args.join(' '));
    }
  });
});

describe('kb delete and count, digests, usage', () => {
  it('when an entry is deleted, then count drops; deleting it again fails', async () => {
    const org = await newOrg();
    await cli(['kb', 'import', org, file('two.jsonl', `${jsonl('a')}\n${jsonl('b')}\n`)]);
    assert.deepEqual(JSON.parse((await cli(['kb', 'count', org, '--json'])).stdout), { count: 2 });
    const del = await cli(['kb', 'delete', org, 'a']);
    assert.equal(del.code, 0, del.stderr);
    assert.equal(del.stdout.trim(), 'Deleted KB entry a');
    assert.equal((await cli(['kb', 'count', org])).stdout.trim(), `1 KB entries in ${org}`);
    const again = await cli(['kb', 'delete', org, 'a']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /KB entry a not found in organization .+ \(not_found\)/);
  });

  it('when a digest is built, then its Markdown is printed (JSON with --json); a refused week fails', async () => {
    const org = await newOrg();
    const md = await cli(['digests', 'build', org, '--week-start', '2026-11-02']);
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /^# FAQ digest 2026-11-02\n\n## Password resets\n/);
    const json = JSON.parse((await cli(['digests', 'build', org, '--json'])).stdout);
    assert.equal(json.week_start, '2026-11-09');
    assert.equal(json.week_end, '2026-11-15');
    assert.equal(json.ticket_count, 3);
    const refused = await cli(['digests', 'build', org, '--week-start', NOT_A_MONDAY]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /week_start must be a Monday/);
    const latest = await cli(['digests', 'latest', org]);
    assert.equal(latest.code, 0, latest.stderr);
    assert.match(latest.stdout, /^# FAQ digest 2026-11-09\n/);
    assert.equal(
      JSON.parse((await cli(['digests', 'latest', org, '--json'])).stdout).week_start,
      '2026-11-09',
    );
  });

  it("when usage is asked, then this month's deflections and the organization's limit are printed", async () => {
    const org = await newOrg();
    await cli(['settings', 'set', org, '--deflection-limit', '40']);
    upstreams.deflectionsUsed.set(org, 9);
    const res = await cli(['usage', org]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout,
      'month             2026-11\ndeflections_used  9\ndeflection_limit  40\n',
    );
    assert.deepEqual(JSON.parse((await cli(['usage', org, '--json'])).stdout), {
      month: '2026-11',
      deflections_used: 9,
      deflection_limit: 40,
    });
  });
});
