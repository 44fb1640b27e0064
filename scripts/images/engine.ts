// The container engine of `npm run images` and `npm run images:smoke`: Debian's podman (with
// buildah and runc), installed from apt when missing, and run with settings of its own.
//
// The settings live in a containers.conf this module writes in its state directory and names
// through CONTAINERS_CONF for every podman it starts; the user's own files are never read for
// them or changed. What they hold, and why (docs/deploy.md, "Building the images with podman"):
//   runtime = "runc"      crun refuses hosts whose cgroups are in hybrid mode
//   default_ulimits       podman's defaults exceed the hard limits of a root without
//                         CAP_SYS_RESOURCE ("setrlimit RLIMIT_NOFILE: Operation not permitted")
//   cgroup_manager, events_logger   no systemd/journald is needed
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The Debian packages the image tooling needs. */
export const ENGINE_PACKAGES = ['podman', 'buildah', 'runc', 'mmdebstrap'] as const;

/** Where the tooling keeps its engine settings and work files (IMAGES_STATE_DIR overrides). */
export const STATE_DIR =
  process.env.IMAGES_STATE_DIR || path.join(os.tmpdir(), 'support-agent-images');

export function log(message: string): void {
  console.log(`[images] ${message}`);
}

function onPath(binary: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
}

/** Runs apt-get as root, waiting for a dpkg lock another installer holds. */
function aptGet(args: string[]): boolean {
  const res = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return res.status === 0;
}

/** Installs podman, buildah, runc and mmdebstrap from apt when one is missing (as root). */
export function ensureEnginePackages(): void {
  const missing = ENGINE_PACKAGES.filter((p) => !onPath(p));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing ${missing.join(', ')}: install them (apt-get install -y ${ENGINE_PACKAGES.join(' ')}) or run as root`,
    );
  }
  log(`installing ${missing.join(', ')} from apt`);
  const started = Date.now();
  const install = ['install', '-y', '--no-install-recommends', ...ENGINE_PACKAGES];
  // A fresh machine's package lists may be stale or absent: update once, then try again.
  if (!aptGet(install) && !(aptGet(['update']) && aptGet(install))) {
    throw new Error(`apt-get install ${ENGINE_PACKAGES.join(' ')} failed`);
  }
  log(`installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The lower of `cap` and this shell's hard limit for `flag` (ulimit -H<flag>). */
function hardLimit(flag: 'n' | 'u', cap: number): number {
  const out = spawnSync('sh', ['-c', `ulimit -H${flag}`], { encoding: 'utf8' }).stdout.trim();
  const limit = out === 'unlimited' ? Infinity : Number(out);
  return Number.isFinite(limit) && limit > 0 ? Math.min(limit, cap) : cap;
}

let engineEnvironment: NodeJS.ProcessEnv | undefined;

/** The environment every podman of the tooling runs with: CONTAINERS_CONF → our own file. */
export function engineEnv(): NodeJS.ProcessEnv {
  if (engineEnvironment) return engineEnvironment;
  mkdirSync(STATE_DIR, { recursive: true });
  const file = path.join(STATE_DIR, 'containers.conf');
  const nofile = hardLimit('n', 1_048_576);
  const nproc = hardLimit('u', 32_768);
  writeFileSync(
    file,
    [
      '# Written by scripts/images/engine.ts for npm run images / images:smoke (CONTAINERS_CONF).',
      '[containers]',
      `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
      '',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  );
  engineEnvironment = { ...process.env, CONTAINERS_CONF: file };
  return engineEnvironment;
}

export interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** podman with the tooling's settings, its output captured. */
export function podman(args: string[], options: SpawnSyncOptions = {}): RunResult {
  const res = spawnSync('podman', args, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: engineEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  return {
    status: res.status ?? 1,
    stdout: String(res.stdout ?? ''),
    stderr: String(res.stderr ?? ''),
  };
}

/** podman that must succeed; throws with its stderr otherwise. Returns stdout, trimmed. */
export function podmanOk(args: string[], options: SpawnSyncOptions = {}): string {
  const res = podman(args, options);
  if (res.status !== 0) {
    throw new Error(
      `podman ${args.slice(0, 3).join(' ')} … failed (${res.status}): ${res.stderr.trim()}`,
    );
  }
  return res.stdout.trim();
}

/**
 * podman streaming its output line by line to `onLine` (a build's progress), without holding
 * the event loop; resolves with the exit status.
 */
export function podmanStreaming(args: string[], onLine: (line: string) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { env: engineEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        lines.forEach(onLine);
      });
      stream.on('end', () => rest && onLine(rest));
    }
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

export function imageExists(image: string): boolean {
  return podman(['image', 'exists', image]).status === 0;
}

/** An image's size in bytes, as `podman images` counts it (all its layers). */
export function imageSize(image: string): number {
  return Number(podmanOk(['image', 'inspect', '--format', '{{.Size}}', image]));
}

export function imageLabels(image: string): Record<string, string> {
  const out = podmanOk(['image', 'inspect', '--format', '{{json .Labels}}', image]);
  return (JSON.parse(out || '{}') as Record<string, string> | null) ?? {};
}

export const MB = 1_000_000;
export const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
