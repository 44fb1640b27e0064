// What the full-disk and clock-jump suites share: one stack with an organization that has a key
// for every operation and a short KB, a steady load on it, and the checks after a fault
// (every operation back, no contract broken).
import { SHORT_KB } from './kb.js';
import { ALL_SCOPES, type Stack } from './stack.js';
import { OPS, SteadyLoad, type Op } from './steady-load.js';

export const GRPC_DEADLINE_MS = 2_500;
export const CLIENT_TIMEOUT_MS = GRPC_DEADLINE_MS + 2_000;
/** After a fault ends, every operation works again within this (no restart by hand). */
export const RESUME_WITHIN_MS = 10_000;

export const FAULT_KB = [
  ...SHORT_KB.slice(0, 2),
  {
    id: 'invoices',
    question: 'Where can I download my invoices?',
    answer: 'Invoices are under Billing > Invoices; each one can be downloaded as a PDF.',
  },
];

/** The environment every process of a fault suite's stack gets. */
export const FAULT_ENV: Record<string, string> = {
  GRPC_DEADLINE_MS: String(GRPC_DEADLINE_MS),
  DIGEST_SCHEDULER_ENABLED: 'false',
  DIGEST_METRICS_PORT: '0',
  DIGEST_ACK_WAIT_MS: '2000',
  TRIAGE_ACK_WAIT_MS: '2000',
  OUTBOX_MAX_BACKOFF_MS: '1000',
  SHUTDOWN_GRACE_MS: '2000',
};

/** An organization with a key for every operation, the given settings and the fault KB. */
export async function faultOrg(
  stack: Stack,
  orgId: string,
  settings: Record<string, number>,
): Promise<string> {
  const key = await stack.orgWithKey(orgId, ALL_SCOPES, settings);
  await stack.admin('POST', `/admin/v1/orgs/${orgId}/kb/entries`, FAULT_KB);
  return key;
}

/** A steady load of every operation on gateway 0 of `stack`. */
export function steadyLoad(stack: Stack, key: string, workers = 4): SteadyLoad {
  return new SteadyLoad({
    gateways: { count: 1, url: () => stack.baseUrl(0), isDown: () => false, epoch: () => 0 },
    key,
    workers,
    timeoutMs: CLIENT_TIMEOUT_MS,
    paceMs: 40,
    questions: FAULT_KB.map((e) => e.question),
  });
}

/** Every operation until each succeeds; the milliseconds the slowest took. */
export async function probeAll(load: SteadyLoad, ops: readonly Op[] = OPS): Promise<number> {
  const times = await Promise.all(ops.map((op) => load.probe(op, RESUME_WITHIN_MS)));
  return Math.max(...times);
}

/** Violations as "count × phase / op / detail" lines, most frequent first. */
export function groupViolations(load: SteadyLoad): string[] {
  const groups = new Map<string, number>();
  for (const v of load.violations) {
    const k = `${v.phase} / ${v.op} / ${v.detail.replace(/\d{4,}/g, 'N').slice(0, 160)}`;
    groups.set(k, (groups.get(k) ?? 0) + 1);
  }
  return [...groups].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} × ${k}`);
}

/** Requests of a phase: sent, answered with a success, and with a 503. */
export function phaseLine(load: SteadyLoad, phase: string): string {
  const s = load.phases.get(phase) ?? { sent: 0, success: 0, unavailable: 0, refused: 0 };
  return `requests ${s.sent}, success ${s.success}, 503 ${s.unavailable}`;
}
