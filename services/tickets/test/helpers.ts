import { createLogger, createTicketsClient } from '@support-agent/shared';
import { connect, type NatsConnection } from 'nats';
import { loadTicketsConfig, type TicketsConfig } from '../src/config.js';
import { start, type TicketsServer } from '../src/server.js';

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

/** A real generated client for a running service, each RPC as a promise (errors as AppError). */
export function ticketsClient(port: number) {
  return createTicketsClient(`127.0.0.1:${port}`, { deadlineMs: 15_000 });
}

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

export interface StreamEvent {
  seq: number;
  subject: string;
  msgId: string | undefined;
  event: {
    id: string;
    type: string;
    org_id: string;
    ticket_id: number;
    occurred_at: string;
    data: Record<string, unknown>;
  };
}

/** Every message of stream TICKETS that belongs to `orgId`, in stream order. */
export async function readStream(natsUrl: string, orgId: string): Promise<StreamEvent[]> {
  const nc: NatsConnection = await connect({ servers: natsUrl, timeout: 2_000 });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info('TICKETS');
    const out: StreamEvent[] = [];
    if (info.state.messages === 0) return out;
    const decoder = new TextDecoder();
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const msg = await jsm.streams.getMessage('TICKETS', { seq });
      const event = JSON.parse(decoder.decode(msg.data)) as StreamEvent['event'];
      if (event.org_id !== orgId) continue;
      out.push({ seq, subject: msg.subject, msgId: msg.header?.get('Nats-Msg-Id'), event });
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** A string of `n` code points built from `unit` (which may be an astral character). */
export function codePoints(unit: string, n: number): string {
  return unit.repeat(n);
}
