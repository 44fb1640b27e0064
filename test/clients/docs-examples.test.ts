// docs/clients.md is executable: its marked blocks are written to a user's project directory
// (`<!-- test: file NAME -->`) or run there with bash (`<!-- test: run -->`, optionally
// `exit=N`), in page order, against a live stack; a `<!-- test: output -->` block must match
// what the run before it printed, `…` standing for any text. Then every TypeScript file of the
// page is type-checked with `strict`. So curl, the generated TypeScript clients, Python's httpx
// and the MCP clients (Inspector CLI, mcp.json, Claude Desktop through mcp-remote, the SDK) are
// shown exactly as they behave.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ROOT,
  run,
  startClientStack,
  removeDir,
  userProject,
  writeStrictTsconfig,
  type ClientStack,
  type RunResult,
} from './support/clients.js';

const PAGE = join(ROOT, 'docs/clients.md');
/** Debian's interpreter, where python3-httpx is installed (another python3 may come first). */
const PYTHON = '/usr/bin/python3';

type Step =
  | { kind: 'file'; name: string; body: string; line: number }
  | { kind: 'run'; exit: number; body: string; line: number }
  | { kind: 'output'; body: string; line: number };

/** The marked blocks of a Markdown page, in order. */
function stepsOf(markdown: string): Step[] {
  const lines = markdown.split('\n');
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- test: (run(?: exit=(\d+))?|file (\S+)|output) -->$/.exec(lines[i]!);
    if (!marker) continue;
    const open = i + 1;
    if (!/^```/.test(lines[open] ?? ''))
      throw new Error(`line ${i + 1}: no code block after marker`);
    const close = lines.findIndex((l, j) => j > open && l === '```');
    if (close < 0) throw new Error(`line ${open + 1}: unclosed code block`);
    const body = lines.slice(open + 1, close).join('\n');
    const line = i + 1;
    if (marker[3]) steps.push({ kind: 'file', name: marker[3], body, line });
    else if (marker[1]!.startsWith('run')) {
      steps.push({ kind: 'run', exit: Number(marker[2] ?? 0), body, line });
    } else steps.push({ kind: 'output', body, line });
    i = close;
  }
  return steps;
}

/** The documented output as a pattern: `…` is any text; found anywhere in what was printed. */
function outputPattern(documented: string): RegExp {
  const parts = documented
    .trim()
    .split('…')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('[\\s\\S]*?'));
}

let cs: ClientStack;
let project: string;
const steps = stepsOf(readFileSync(PAGE, 'utf8'));

before(async () => {
  cs = await startClientStack('docs-examples');
  project = userProject('docs-examples');
  mkdirSync(join(project, 'bin'));
  if (existsSync(PYTHON)) symlinkSync(PYTHON, join(project, 'bin', 'python3'));
});

after(async () => {
  await cs?.stop();
  removeDir(project);
});

test('when docs/clients.md is read, then it has examples of every kind, each followed by its output', () => {
  const runs = steps.filter((s) => s.kind === 'run');
  assert.ok(runs.length >= 10, `${runs.length} runnable examples`);
  for (const tool of [
    'curl ',
    'npx tsx',
    'python3 ',
    '@modelcontextprotocol/inspector',
    'mcp-remote',
  ]) {
    assert.ok(
      steps.some((s) => s.body.includes(tool)),
      `an example uses ${tool.trim()}`,
    );
  }
  steps.forEach((s, i) => {
    if (s.kind === 'output') assert.equal(steps[i - 1]?.kind, 'run', `line ${s.line}`);
  });
});

test('when every example of docs/clients.md runs against a live stack, then each prints what the page shows', async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: apt-get install -y python3-httpx`);
  const env = {
    SUPPORT_AGENT_URL: cs.url,
    SUPPORT_AGENT_KEY: cs.key,
    PATH: `${join(project, 'bin')}:${join(project, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
  };
  let last: RunResult | undefined;
  for (const step of steps) {
    if (step.kind === 'file') {
      const body = step.body
        .replaceAll('http://localhost:8080', cs.url)
        .replaceAll('YOUR_API_KEY', cs.key);
      writeFileSync(join(project, step.name), `${body}\n`);
    } else if (step.kind === 'run') {
      last = await run('bash', ['-e', '-o', 'pipefail', '-c', step.body], {
        cwd: project,
        env,
        timeoutMs: 180_000,
      });
      assert.equal(last.code, step.exit, `line ${step.line}: exit code\n${last.output}`);
    } else {
      assert.match(last!.output, outputPattern(step.body), `line ${step.line}: output`);
    }
  }
});

test('when the TypeScript examples are type-checked (strict), then there is no error', async () => {
  writeStrictTsconfig(project);

  const files = steps.flatMap((s) => (s.kind === 'file' && s.name.endsWith('.ts') ? [s.name] : []));
  assert.ok(files.length >= 3);
  for (const file of files) assert.ok(existsSync(join(project, file)), `${file} was written`);
  const tsc = await run('npx', ['tsc', '-p', '.'], { cwd: project });
  assert.equal(tsc.code, 0, tsc.output);
});
