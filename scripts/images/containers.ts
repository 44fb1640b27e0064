// The five service containers as docker-compose.yml runs them, with podman: read-only root
// file system, a tmpfs /tmp, every capability dropped, no-new-privileges, the image's non-root
// user, compose's memory limits. They share the host's network (loopback backends, PORT_BASE
// ports), so each listens where its configuration says, exactly as under `npm start`.
import type { StackService } from '@support-agent/shared/ports';
import { podman, podmanOk } from './engine.js';
import { imageName } from './targets.js';

/** docker-compose.yml's memory limits (x-app 384M; knowledge and digest 512M). */
export const MEMORY: Record<StackService, string> = {
  tickets: '384m',
  knowledge: '512m',
  answers: '384m',
  digest: '512m',
  gateway: '384m',
};

export const containerName = (service: StackService) => `support-agent-smoke-${service}`;

/** Starts `service` detached with `env`; returns the container name. */
export function runHardened(service: StackService, env: Record<string, string>): string {
  const name = containerName(service);
  podman(['rm', '--force', '--ignore', name]);
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  podmanOk([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    '--read-only',
    '--tmpfs',
    '/tmp',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    '--memory',
    MEMORY[service],
    ...envArgs,
    imageName(service),
  ]);
  return name;
}

/** The uid a process started in the container runs as (the image's USER), e.g. "1000". */
export function processUser(name: string): string {
  return podmanOk(['exec', name, 'id', '-u']);
}

/** `podman healthcheck run`: the image's HEALTHCHECK, run now (there is no systemd timer here). */
export function healthy(name: string): boolean {
  return podman(['healthcheck', 'run', name], { timeout: 30_000 }).status === 0;
}

export function state(name: string): { running: boolean; exitCode: number } {
  const [running, exitCode] = podmanOk([
    'inspect',
    '--format',
    '{{.State.Running}} {{.State.ExitCode}}',
    name,
  ]).split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

export function logs(name: string, lines = 40): string {
  const res = podman(['logs', '--tail', String(lines), name]);
  return (res.stdout + res.stderr).trim();
}

export function remove(name: string): void {
  podman(['rm', '--force', '--ignore', '--time', '0', name]);
}
