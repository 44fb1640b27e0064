import { createLogger } from '@support-agent/shared';
import { loadTicketsConfig, type TicketsConfig } from '../src/config.js';
import { start, type TicketsServer } from '../src/server.js';
import { readStream as readAllEvents } from '../../../test/support/events.js';

export { assertAppError, eventually, newOrg, requireEnv } from '../../../test/support/testing.js';

export const testLogger = createLogger('tickets-test', process.env.TEST_LOG_LEVEL ?? 'silent');

export function testConfig(env: Record<string, string | undefined>): TicketsConfig {
  return loadTicketsConfig({
    TICKETS_ADDR: '127.0.0.1:0',
    LOG_LEVEL: 'silent',
    OUTBOX_POLL_MS: '100',
    ...env,
  });
}

import {
  ticketsClient,
  withClient,
  type RunningService,
  type TicketsClient,
} from '../../../test/support/local-clients.js';

export { ticketsClient, type TicketsClient };

/** Starts the service and a client for it. */
export async function startService(
  env: Record<string, string | undefined>,
): Promise<RunningService<TicketsServer, TicketsClient>> {
  return withClient(await start(testConfig(env), testLogger), ticketsClient);
}

/** Every message of stream TICKETS that belongs to `orgId`, in stream order. */
export async function readStream(natsUrl: string, orgId: string) {
  return (await readAllEvents(natsUrl)).filter((m) => m.event.org_id === orgId);
}

export type StreamEvent = Awaited<ReturnType<typeof readStream>>[number];

/** A string of `n` code points built from `unit` (which may be an astral character). */
export function codePoints(unit: string, n: number): string {
  return unit.repeat(n);
}
