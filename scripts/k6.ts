// The k6 binary the project's checks use, and one run of a script with it.
//
// No Debian or npm package provides k6. The binary is, in this order: $K6, the k6 v0.48.0 built
// for the project's machines at shared/tools/k6/k6 beside the repository (../shared for a clone,
// ../../shared for a worktree under wt/; its README says how it was built), or `k6` on PATH. The scripts in load/k6 keep to what k6 v0.48 parses.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { ROOT } from './deploy/paths.js';

/** The oldest k6 the scripts support (docs/load-testing.md). */
export const K6_MIN_VERSION = '0.48.0';

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The k6 binary to use, or undefined when there is none here. */
export function k6Binary(): string | undefined {
  if (process.env.K6) return process.env.K6;
  for (const up of ['..', '../..']) {
    const shared = path.resolve(ROOT, up, 'shared/tools/k6/k6');
    if (executable(shared)) return shared;
  }
  const onPath = spawnSync('sh', ['-c', 'command -v k6'], { encoding: 'utf8' }).stdout.trim();
  return onPath || undefined;
}

export interface K6Run {
  status: number;
  /** k6's end-of-test summary and log lines. */
  output: string;
}

/**
 * `k6 run` of a script in load/k6 with `-e NAME=value` for each of `env`, its summary echoed
 * to `echo` line by line as it comes; resolves when k6 exits (non-zero when a threshold fails).
 */
export function runK6(
  binary: string,
  script: string,
  env: Record<string, string>,
  echo: (line: string) => void = () => {},
): Promise<K6Run> {
  const args = ['run', '--no-color', '--quiet'];
  for (const [name, value] of Object.entries(env)) args.push('-e', `${name}=${value}`);
  args.push(path.join(ROOT, 'load/k6', script));
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let rest = '';
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      lines.forEach(echo);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => {
      if (rest) echo(rest);
      resolve({ status: code ?? 1, output });
    });
  });
}

/** The scopes of the key a load test uses: every agent operation. */
const ALL_SCOPES = 'kb:read,faq:read,tickets:read,tickets:write,answers:write';

/**
 * An organization for a load test, made through `admin` (the admin CLI with `--json`): the
 * organization, a key with every scope, and limits high enough that the run measures the
 * service, not the rate limiter. Returns the key.
 */
export function createLoadTestOrg(
  admin: (args: string[]) => string,
  org: string,
  name: string,
): string {
  admin(['orgs', 'create', name, '--id', org]);
  const { key } = JSON.parse(admin(['keys', 'create', org, '--scopes', ALL_SCOPES])) as {
    key: string;
  };
  const high = '1000000';
  admin([
    'settings',
    'set',
    org,
    '--rate-limit-per-key',
    high,
    '--rate-limit-per-org',
    high,
    '--deflection-limit',
    high,
  ]);
  return key;
}
