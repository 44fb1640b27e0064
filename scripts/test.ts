// `npm test` driver: starts throwaway MariaDB, Redis and NATS servers, runs the test files with
// node's test runner against them, and always tears the servers down again.
//
//   tsx scripts/test.ts                         all tests (unit/component first, e2e last)
//   tsx scripts/test.ts path/a.test.ts ...      only these files (directories are expanded)
//   tsx scripts/test.ts --test-name-pattern=x   extra `node --test` options, default files
//
// Tests find the servers through TEST_MYSQL_URL, TEST_REDIS_URL, TEST_NATS_URL, and can crash or
// restart them through the state file in TEST_BACKENDS_STATE (see test/support/backends.ts).
// KEEP_TEST_TMP=1 keeps the temp dir (server logs, data) for debugging.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ensureBackendPackages,
  startBackends,
  writeBackendsState,
  type Backends,
} from '../test/support/backends.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------
// Test file discovery (node 20's --test does not expand globs)

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git']);

/** All *.test.ts files below dir, as sorted paths relative to the repo root. */
function testFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !SKIP_DIRS.has(entry.name)) found.push(...testFilesUnder(full));
    else if (entry.isFile() && entry.name.endsWith('.test.ts'))
      found.push(path.relative(root, full));
  }
  return found.sort();
}

/** `<group>/*\/test/**\/*.test.ts` for each workspace directory in group. */
function workspaceTests(group: string): string[] {
  const groupDir = path.join(root, group);
  if (!existsSync(groupDir)) return [];
  return readdirSync(groupDir)
    .sort()
    .flatMap((ws) => testFilesUnder(path.join(groupDir, ws, 'test')));
}

function defaultTestFiles(): string[] {
  // Unit/component tests first: they fail fast and cheaply; e2e last.
  return [
    ...workspaceTests('packages'),
    ...workspaceTests('services'),
    ...testFilesUnder(path.join(root, 'test/architecture')),
    ...testFilesUnder(path.join(root, 'test/deploy')),
    ...testFilesUnder(path.join(root, 'test/e2e')),
    // Clients nobody here wrote (browser, MCP Inspector, generated SDKs, the docs' examples).
    ...testFilesUnder(path.join(root, 'test/clients')),
    // Fault injection, fuzzing and isolation suites: the slowest, so they run last.
    ...testFilesUnder(path.join(root, 'test/security')),
    ...testFilesUnder(path.join(root, 'test/reliability')),
  ];
}

/** Splits CLI args into test files (existing paths) and options passed through to node. */
function parseArgs(args: string[]): { files: string[]; nodeArgs: string[] } {
  const files: string[] = [];
  const nodeArgs: string[] = [];
  for (const arg of args) {
    // Anything that is not an existing path (e.g. the value of `--test-name-pattern x`)
    // is passed through in order.
    if (arg.startsWith('-') || !existsSync(arg)) nodeArgs.push(arg);
    else if (statSync(arg).isDirectory()) files.push(...testFilesUnder(path.resolve(arg)));
    else files.push(arg);
  }
  return { files, nodeArgs };
}

// ---------------------------------------------------------------------------------------------
// Teardown that runs exactly once, whatever ends the run

let backends: Backends | undefined;
let tmpDir: string | undefined;
let testChild: ChildProcess | undefined;
let teardownPromise: Promise<void> | undefined;
let interruptedBy: NodeJS.Signals | undefined;

function teardown(): Promise<void> {
  teardownPromise ??= (async () => {
    try {
      await backends?.stop();
    } catch (err) {
      console.error('Stopping test backends failed:', err);
    }
    if (!tmpDir) return;
    if (process.env.KEEP_TEST_TMP === '1') console.error(`Kept test temp dir: ${tmpDir}`);
    else rmSync(tmpDir, { recursive: true, force: true });
  })();
  return teardownPromise;
}

function onSignal(signal: NodeJS.Signals): void {
  if (interruptedBy) {
    // Second Ctrl-C: the user insists. Servers may be left behind; say where.
    console.error(`\nForced exit; backends may still run (see ${tmpDir ?? 'n/a'})`);
    process.exit(128 + os.constants.signals[signal]);
  }
  interruptedBy = signal;
  if (testChild && testChild.exitCode === null && testChild.signalCode === null) {
    // Let the test runner finish its own cleanup; main() tears down once it has exited.
    testChild.kill(signal);
    setTimeout(() => testChild?.kill('SIGKILL'), 15_000).unref();
  }
  // Otherwise main() notices `interruptedBy` after the current step (e.g. backend start-up).
}

// ---------------------------------------------------------------------------------------------

/** What scripts/test-timing-reporter.mjs records. */
interface Progress {
  done: Record<string, { ms: number; failed: boolean }>;
  current?: string;
  since: number;
  last: number;
  failed: boolean;
}

function readProgress(file: string): Progress | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Progress;
  } catch {
    return undefined; // no result yet
  }
}

const relative = (file: string) => path.relative(root, file) || file;

/** The test files by wall time, slowest first: where a run's minutes went. */
function printTimings(p: Progress | undefined): void {
  if (!p) return;
  const rows = Object.entries(p.done).map(([file, e]) => [file, e.ms, e.failed] as const);
  // The last file's results may not all have been recorded when the run ended.
  if (p.current && !(p.current in p.done)) rows.push([p.current, p.last - p.since, p.failed]);
  rows.sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(
    `\nTest files by wall time (${rows.length} files, ${(total / 60_000).toFixed(1)} min):`,
  );
  for (const [file, ms, failed] of rows) {
    console.log(
      `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(file)}${failed ? '  (failed)' : ''}`,
    );
  }
}

/** The longest a single test may take (the network-fault suite's longest is about 12 min). */
const TEST_TIMEOUT_MS = 20 * 60_000;
/** The whole run's budget: CI allows 90 min for everything, the tests included. */
const BUDGET_MINUTES = Number(process.env.TEST_BUDGET_MINUTES ?? 65);

function runTests(files: string[], nodeArgs: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=1',
    // A test that hangs fails on its own rather than eating the run's whole budget, and a file
    // whose tests are done exits even if a failed test left a timer or socket open (the runner
    // would otherwise wait for that file forever).
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-force-exit',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(root, 'scripts/test-timing-reporter.mjs')}`,
    '--test-reporter-destination=stdout',
    ...nodeArgs,
    ...files,
  ];
  testChild = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
  const progressFile = env.TEST_PROGRESS_FILE!;
  const budget = setTimeout(() => {
    // Past the budget the run is stuck or far slower than it should be: stop it and say where,
    // so CI fails with a reason instead of being cut off without one.
    const p = readProgress(progressFile);
    const where = p?.current
      ? `${relative(p.current)} (its last result ${new Date(p.last).toISOString()})`
      : 'no file yet';
    console.error(
      `\nnpm test ran past its budget of ${BUDGET_MINUTES} min (TEST_BUDGET_MINUTES); the last ` +
        `result came from ${where}. Stopping the test runner.`,
    );
    testChild?.kill('SIGTERM');
    setTimeout(() => testChild?.kill('SIGKILL'), 15_000).unref();
  }, BUDGET_MINUTES * 60_000);
  budget.unref();
  testChild.once('exit', () => {
    clearTimeout(budget);
    printTimings(readProgress(progressFile));
  });
  return new Promise((resolve) => {
    testChild!.once('error', (err) => {
      console.error(`Could not start node --test: ${err.message}`);
      resolve(1);
    });
    testChild!.once('exit', (code, signal) => {
      resolve(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
    });
  });
}

async function main(): Promise<number> {
  const { files: cliFiles, nodeArgs } = parseArgs(process.argv.slice(2));
  const files = cliFiles.length > 0 ? cliFiles : defaultTestFiles();
  if (files.length === 0) {
    console.error('No test files found.');
    return 1;
  }

  await ensureBackendPackages();
  tmpDir = mkdtempSync(path.join(os.tmpdir(), 'support-agent-test-'));
  backends = await startBackends(tmpDir);
  if (interruptedBy) return 128 + os.constants.signals[interruptedBy];

  const stateFile = path.join(tmpDir, 'backends.json');
  writeBackendsState(stateFile, backends);
  const { mysql, redis, nats } = backends;
  console.log(
    `Test backends: mysql 127.0.0.1:${mysql.port}, redis 127.0.0.1:${redis.port}, ` +
      `nats 127.0.0.1:${nats.port} (dir ${tmpDir}); ${files.length} test files`,
  );

  return runTests(files, nodeArgs, {
    ...process.env,
    TEST_MYSQL_URL: mysql.url,
    TEST_REDIS_URL: redis.url,
    TEST_NATS_URL: nats.url,
    TEST_BACKENDS_STATE: stateFile,
    TEST_TMP_DIR: tmpDir,
    TEST_PROGRESS_FILE: path.join(tmpDir, 'progress.txt'),
  });
}

process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  console.error(err);
} finally {
  await teardown();
}
process.exit(exitCode);
