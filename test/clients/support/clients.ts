// Helpers for the client suites (test/clients): a full stack on embedded adapters with the
// organizations and keys a new user would have, a throwaway "user project" directory that
// resolves packages and bins from the repository (so npx, tsx and tsc never reach the network),
// and a process runner that returns what a person would see on the terminal.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Stack } from '../../support/stack.js';

export const ROOT = resolve(new URL('../../..', import.meta.url).pathname);

/** A small knowledge base: questions the examples search for and answer. */
export const CLIENT_KB = [
  {
    id: 'pw-reset',
    question: 'How do I reset my password?',
    answer:
      'On the sign-in page choose "Forgot password?" and enter your email address. The reset link works once, for 60 minutes.',
  },
  {
    id: 'export-csv',
    question: 'How do I export tickets to CSV?',
    answer: 'In the Tickets view choose Export > CSV. Large exports are emailed to you.',
  },
  {
    id: 'sso',
    question: 'Can we sign in with single sign-on?',
    answer: 'Yes: owners enable SAML single sign-on under Settings > Security > SSO.',
  },
];

export const READ_SCOPES = ['kb:read', 'faq:read', 'tickets:read'];

export interface ClientStack {
  stack: Stack;
  /** The gateway, as a user would write it: http://127.0.0.1:<port>. */
  url: string;
  /** Organization `clients` (KB loaded): every scope. */
  key: string;
  /** The same organization, read scopes only. */
  readOnlyKey: string;
  stop(): Promise<void>;
}

/**
 * Starts every service on embedded adapters (as `npm start` does) in `dir`, with the
 * organization `clients`, its knowledge base, an all-scope key and a read-only key.
 * `env` goes to every process (e.g. `PUBLIC_BASE_URL: ''` to leave it unset).
 */
export async function startClientStack(
  name: string,
  env: Record<string, string> = {},
): Promise<ClientStack> {
  const dir = mkdtempSync(join(tmpdir(), `clients-${name}-`));
  const stack = await new Stack({ dir, env }).start();
  const key = await stack.orgWithKey('clients');
  const readOnlyKey = await stack.keyFor('clients', READ_SCOPES);
  await stack.admin('POST', '/admin/v1/orgs/clients/kb/entries', CLIENT_KB);
  const stop = async () => {
    await stack.stop();
    removeDir(dir);
  };
  return { stack, url: stack.baseUrl(), key, readOnlyKey, stop };
}

/** Removes a directory a suite made, unless KEEP_TEST_TMP=1 (as scripts/test.ts keeps its own). */
export function removeDir(dir: string | undefined): void {
  if (dir && process.env.KEEP_TEST_TMP !== '1') rmSync(dir, { recursive: true, force: true });
}

/**
 * A directory standing for a user's project: `package.json` (ESM) and `node_modules` linked to
 * the repository's, so the tools the docs tell users to install are found locally.
 */
export function userProject(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `clients-${name}-`));
  writeFileSync(join(dir, 'package.json'), '{ "private": true, "type": "module" }\n');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  mkdirSync(join(dir, 'home'));
  return dir;
}

/**
 * A strict tsconfig.json for the project's TypeScript (ESM, NodeNext), as a user of the
 * generated clients would have; `npx tsc -p .` then type-checks everything there.
 */
export function writeStrictTsconfig(dir: string): void {
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: ['node'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  const config = { compilerOptions, include: ['*.ts', 'sdk/**/*.ts'] };
  writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify(config, null, 2)}\n`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr, as a terminal would interleave them (roughly). */
  output: string;
}

/**
 * Runs a command with a deadline and no stdin. npm works offline (packages come from the linked
 * node_modules) and HOME is the project's, so tools keep no state between tests.
 */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<RunResult> {
  const env: Record<string, string> = {
    PATH: `${join(options.cwd, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
    HOME: join(options.cwd, 'home'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    NO_COLOR: '1',
    ...options.env,
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, output });
    });
  });
}

/** Fails with everything the command printed when it did not exit 0. */
export function assertOk(result: RunResult, what: string): RunResult {
  if (result.code !== 0) {
    throw new Error(`${what} exited ${result.code}:\n${result.output.slice(-4000)}`);
  }
  return result;
}
