// What the image tooling builds and runs: the Dockerfile's five targets, tagged
// support-agent/<service>:<SUPPORT_AGENT_VERSION of .env> (the tag compose and the Kubernetes
// overlays use).
import { readFileSync } from 'node:fs';
import { STACK_SERVICES, type StackService } from '@support-agent/shared/ports';
import { parseDotEnv } from '../deploy/compose.js';
import { DOTENV_FILE } from '../deploy/paths.js';

export const SERVICES: readonly StackService[] = STACK_SERVICES;

export function imageVersion(): string {
  const version = parseDotEnv(readFileSync(DOTENV_FILE, 'utf8')).SUPPORT_AGENT_VERSION;
  if (!version) throw new Error('.env has no SUPPORT_AGENT_VERSION');
  return version;
}

export function imageName(service: StackService, version = imageVersion()): string {
  return `support-agent/${service}:${version}`;
}

/** The name podman stores a short name under (`podman image inspect` answers to both). */
export const localName = (image: string) => `localhost/${image}`;
