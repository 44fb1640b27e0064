// Another build's gateway next to a Stack's own, for the A/B benches (gateway-ab.ts,
// gateway-rss.ts): the other build is any directory holding a built services/gateway with
// node_modules around it (e.g. a second worktree of an older commit).
import { relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceProcess } from '../../test/support/process.js';
import { freePort } from '../../test/support/stack.js';

/** `<other gateway dir> [seconds=8] [rounds]` from the command line (usage and exit without a dir). */
export function otherBuildArgs(
  script: string,
  defaultRounds: number,
): { other: string; seconds: number; rounds: number } {
  const other = process.argv[2];
  if (!other) {
    console.error(`usage: ${script} <other gateway dir> [seconds] [rounds]`);
    process.exit(2);
  }
  return {
    other,
    seconds: Number(process.argv[3] ?? 8),
    rounds: Number(process.argv[4] ?? defaultRounds),
  };
}

/**
 * Starts the other build's gateway with `env` (the stack's gateway's) on ports of its own,
 * then `overrides`; its log is gateway-b.log in `logDir`. Returned as soon as it is started
 * (so the caller can stop it whatever happens next): wait with untilReady.
 */
export async function startOtherGateway(
  other: string,
  env: Record<string, string>,
  logDir: string,
  overrides: Record<string, string> = {},
): Promise<{ proc: ServiceProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = new ServiceProcess(
    'gateway-b',
    relative(resolve('services'), resolve(other)),
    {
      ...env,
      PORT: String(port),
      ADMIN_PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      PUBLIC_BASE_URL: url,
      ...overrides,
    },
    logDir,
  );
  proc.start();
  return { proc, url };
}

/** Waits (up to 30 s, polling every 200 ms) until the gateway at `url` answers /readyz. */
export async function untilReady(url: string): Promise<void> {
  for (let i = 0; i < 150 && !(await fetch(`${url}/readyz`).catch(() => undefined))?.ok; i++)
    await sleep(200);
}
