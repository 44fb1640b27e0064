import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  callUnary,
  createGrpcClient,
  createLogger,
  type AppError,
  type ErrorCode,
} from '@support-agent/shared';
import { tickets } from '@support-agent/proto';
import { connect, type NatsConnection } from 'nats';
import { loadTicketsConfig, type TicketsConfig } from '../src/config.js';
import { start, type TicketsServer } from '../src/server.js';

export const testLogger = createLogger('tickets-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** A fresh organization id, so test files sharing Redis and NATS never see each other's data. */
export function newOrg(prefix = 'org'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export function testConfig(env: Record<string, string | undefined>): TicketsConfig {
  return loadTicketsConfig({
    TICKETS_ADDR: '127.0.0.1:0',
    LOG_LEVEL: 'silent',
    OUTBOX_POLL_MS: '100',
    ...env,
  });
}

/** A real generated client for a running service, with each RPC as a promise (errors as AppError). */
export function ticketsClient(port: number) {
  const client = createGrpcClient(tickets.TicketsServiceClient, `127.0.0.1:${port}`);
  const call =
    <Req, Res>(method: Parameters<typeof callUnary<Req, Res>>[0]) =>
    (request: Req) =>
      callUnary(method.bind(client), request, {
        timeoutMs: 15_000,
        requestId: `test-${randomBytes(4).toString('hex')}`,
      });
  return {
    createTicket: call<tickets.CreateTicketRequest, tickets.CreateTicketResponse>(
      client.createTicket,
    ),
    listTickets: call<tickets.ListTicketsRequest, tickets.ListTicketsResponse>(client.listTickets),
    getTicket: call<tickets.GetTicketRequest, tickets.GetTicketResponse>(client.getTicket),
    updateTicketStatus: call<tickets.UpdateTicketStatusRequest, tickets.UpdateTicketStatusResponse>(
      client.updateTicketStatus,
    ),
    applyTriage: call<tickets.ApplyTriageRequest, tickets.ApplyTriageResponse>(client.applyTriage),
    close: () => client.close(),
  };
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

/** Asserts that a call fails with the given AppError code (and param, when given). */
export async function assertAppError(
  promise: Promise<unknown>,
  code: ErrorCode,
  param?: string,
): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    const e = err as AppError;
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    if (param !== undefined) assert.equal(e.param, param);
    return e;
  }
  assert.fail(`expected the call to fail with ${code}`);
}

/** Polls `check` until it returns a value that is not undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run tests through \`npm test\``);
  return v;
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
