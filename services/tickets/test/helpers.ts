import { createTicketsClient, createLogger } from '@support-agent/shared';
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

/** The shared client of the service on 127.0.0.1:port (errors as AppError). */
export const ticketsClient = (port: number) =>
  createTicketsClient(`127.0.0.1:${port}`, { deadlineMs: 15_000 });

export type TicketsClient = ReturnType<typeof ticketsClient>;

/** Starts the service and a client for it. */
export async function startService(
  env: Record<string, string | undefined>,
): Promise<{ server: TicketsServer; client: TicketsClient; stop(): Promise<void> }> {
  const server = await start(testConfig(env), testLogger);
  const client = ticketsClient(server.port);
  return {
    server,
    client,
    async stop() {
      client.close();
      await server.stop();
    },
  };
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
