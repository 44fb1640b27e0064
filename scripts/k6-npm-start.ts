// `npm run load:npm-start`: k6 smoke.js and a 30 s load.js at 50 requests/s against a fresh
// `npm start` stack (embedded adapters, its own DATA_DIR, a free PORT_BASE), thresholds
// holding; the organization and its key are made with the admin CLI, which finds the admin API
// through PORT_BASE. Exits 1 when a threshold fails, 0 with a notice when there is no k6 here
// (scripts/k6.ts says where it is looked for). Needs `npm run build` first.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './deploy/paths.js';
import { createLoadTestOrg, k6Binary, runK6 } from './k6.js';
import { freePortBase } from './port-base.js';

async function waitReady(url: string, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

async function main(): Promise<number> {
  const k6 = k6Binary();
  if (!k6) {
    console.log('[k6] no k6 binary ($K6, shared/tools/k6/k6 or PATH): skipped');
    return 0;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'k6-npm-start-'));
  const base = await freePortBase();
  const env = { ...process.env, PORT_BASE: String(base), DATA_DIR: path.join(dir, 'data') };
  const logFile = path.join(dir, 'start.log');
  const fd = openSync(logFile, 'a');
  const stack = spawn(process.execPath, [path.join(ROOT, 'scripts/start.mjs')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const stopped = new Promise((r) => stack.once('exit', r));
  try {
    const api = `http://127.0.0.1:${base}`;
    if (!(await waitReady(`${api}/readyz`, 180_000))) {
      console.log(readFileSync(logFile, 'utf8').slice(-3000));
      throw new Error(`npm start (PORT_BASE=${base}) did not become ready`);
    }
    const admin = (args: string[]) => {
      const res = spawnSync(
        process.execPath,
        [path.join(ROOT, 'services/gateway/dist/cli/admin.js'), '--json', ...args],
        { env, encoding: 'utf8' },
      );
      if (res.status !== 0) throw new Error(`admin ${args.join(' ')}: ${res.stderr}`);
      return res.stdout;
    };
    const key = createLoadTestOrg(admin, 'k6', 'k6 load test');
    console.log(`[k6] ${k6} against npm start at ${api} (PORT_BASE=${base})`);
    const echo = (line: string) => console.log(`  k6 | ${line}`);
    const smoke = await runK6(k6, 'smoke.js', { BASE_URL: api, API_KEY: key }, echo);
    const load = await runK6(
      k6,
      'load.js',
      { BASE_URL: api, API_KEY: key, RATE: '50', DURATION: '30s', VUS: '20', MAX_VUS: '100' },
      echo,
    );
    console.log(`[k6] smoke.js exit ${smoke.status}, load.js (30 s at 50/s) exit ${load.status}`);
    return smoke.status === 0 && load.status === 0 ? 0 : 1;
  } finally {
    stack.kill('SIGTERM');
    await stopped;
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`[k6] ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
