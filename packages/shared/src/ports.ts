// The listeners of one stack, laid out from one number (PORT_BASE), so that two stacks run side
// by side on one machine with one variable each. Imported by every service's config and by
// scripts/start.mjs (through the `@support-agent/shared/ports` entry, which loads nothing else).

/** The services of a stack, in start order; each has its own gRPC and metrics port. */
export const STACK_SERVICES = ['tickets', 'knowledge', 'answers', 'digest', 'gateway'] as const;
export type StackService = (typeof STACK_SERVICES)[number];

/** Offsets from PORT_BASE. The gateway's gRPC slot (15) is unused: it serves no gRPC. */
export const PORT_OFFSETS = {
  PORT: 0,
  ADMIN_PORT: 1,
  TICKETS_ADDR: 11,
  KNOWLEDGE_ADDR: 12,
  ANSWERS_ADDR: 13,
  DIGEST_ADDR: 14,
  /** + the service's index in STACK_SERVICES: tickets 21 … gateway 25. */
  METRICS_PORT: 21,
} as const;

/** The highest offset in use: PORT_BASE may be at most 65535 minus this. */
const MAX_OFFSET = PORT_OFFSETS.METRICS_PORT + STACK_SERVICES.length - 1;

/**
 * The port variables PORT_BASE implies for `service`: PORT, ADMIN_PORT, the four gRPC
 * addresses (on 127.0.0.1) and the service's own METRICS_PORT. Empty when PORT_BASE is unset.
 * Throws (with a message naming PORT_BASE) when it is not a port number leaving room for the
 * layout.
 */
export function portBaseDefaults(
  env: Readonly<Record<string, string | undefined>>,
  service: StackService,
): Record<string, string> {
  const raw = env.PORT_BASE?.trim();
  if (raw === undefined || raw === '') return {};
  const base = Number(raw);
  if (!/^[0-9]+$/.test(raw) || base < 1 || base > 65535 - MAX_OFFSET) {
    throw new RangeError(`must be an integer from 1 to ${65535 - MAX_OFFSET} (got "${raw}")`);
  }
  const at = (offset: number) => String(base + offset);
  return {
    PORT: at(PORT_OFFSETS.PORT),
    ADMIN_PORT: at(PORT_OFFSETS.ADMIN_PORT),
    TICKETS_ADDR: `127.0.0.1:${at(PORT_OFFSETS.TICKETS_ADDR)}`,
    KNOWLEDGE_ADDR: `127.0.0.1:${at(PORT_OFFSETS.KNOWLEDGE_ADDR)}`,
    ANSWERS_ADDR: `127.0.0.1:${at(PORT_OFFSETS.ANSWERS_ADDR)}`,
    DIGEST_ADDR: `127.0.0.1:${at(PORT_OFFSETS.DIGEST_ADDR)}`,
    METRICS_PORT: at(PORT_OFFSETS.METRICS_PORT + STACK_SERVICES.indexOf(service)),
  };
}

/**
 * The environment with PORT_BASE's defaults filled in for `service`: a variable that is set
 * (non-empty) always wins over the layout.
 */
export function withPortBase(
  env: Readonly<Record<string, string | undefined>>,
  service: StackService,
): Record<string, string | undefined> {
  const defaults = portBaseDefaults(env, service);
  const merged: Record<string, string | undefined> = { ...env };
  for (const [name, value] of Object.entries(defaults)) {
    if (merged[name] === undefined || merged[name] === '') merged[name] = value;
  }
  return merged;
}
