// The set-up the focused experiments (bench/create-path.ts, search-path.ts, drain-path.ts)
// share: real MariaDB, Redis and NATS under a temp dir, the gateway and the given services as
// their own processes, an organization whose key has every scope and no practical limits,
// and the processes to meter. Environment knobs, the same for every experiment:
//   BENCH_LOG_LEVEL        the services' LOG_LEVEL (default per experiment)
//   SERVICE_NODE_OPTIONS   the services' NODE_OPTIONS (memory and GC experiments)
//   SERVICE_ENV            more of their environment: 'K=V K2=V2' (spaces or commas)
//   BENCH_CPU_PROF=1       a CPU profile per service into bench/results/profiles-<name>-<ts>
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  ensureBackendPackages,
  startBackends,
  type Backends,
} from '../../test/support/backends.js';
import { ALL_SCOPES, Stack } from '../../test/support/stack.js';
import { UNLIMITED, type ProcessRef } from './measure.js';

export interface Experiment {
  stack: Stack;
  backends: Backends;
  /** A key of the organization `bench` with every scope and limits no run reaches. */
  key: string;
  /** Gateway, services, load client (this process) and backends, for the CPU and RSS meters. */
  processes(extra?: ProcessRef[]): ProcessRef[];
  stop(): Promise<void>;
}

export async function startExperiment(
  name: string,
  services: string[],
  defaultLogLevel = 'info',
): Promise<Experiment> {
  const profileDir =
    process.env.BENCH_CPU_PROF === '1'
      ? resolve(`bench/results/profiles-${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`)
      : undefined;
  const serviceEnv = envAssignments(process.env.SERVICE_ENV);
  await ensureBackendPackages();
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const backends = await startBackends(dir);
  const stack = new Stack({
    dir,
    mysqlUrl: backends.mysql.url,
    redisUrl: backends.redis.url,
    natsUrl: backends.nats.url,
    services,
    env: {
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? defaultLogLevel,
      ...(process.env.SERVICE_NODE_OPTIONS
        ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS }
        : {}),
      ...serviceEnv,
      ...(profileDir
        ? {
            NODE_OPTIONS: `--import=${resolve('bench/lib/cpu-profile-preload.mjs')}`,
            BENCH_PROFILE_DIR: profileDir,
          }
        : {}),
    },
  });
  const stop = async () => {
    await stack.stop();
    await backends.stop();
    rmSync(dir, { recursive: true, force: true });
    if (profileDir) console.log(`profiles: ${profileDir}`);
  };
  try {
    await stack.start();
    const key = await stack.orgWithKey('bench', ALL_SCOPES, UNLIMITED);
    return {
      stack,
      backends,
      key,
      processes: (extra = []) => [
        ...stack.gateways.map((g) => ({ name: 'gateway', pid: g.pid })),
        ...[...stack.upstreams.values()].map((p) => ({ name: p.name, pid: p.pid })),
        ...extra,
        { name: 'load-client', pid: process.pid },
        { name: 'mariadb', pid: backends.mysql.pid },
        { name: 'redis', pid: backends.redis.pid },
        { name: 'nats', pid: backends.nats.pid },
      ],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** 'K=V K2=V2' (spaces or commas) as an environment object; unset = none. */
export function envAssignments(list: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (list ?? '')
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}
