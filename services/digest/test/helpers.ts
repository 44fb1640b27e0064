import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerUnaryCall, sendUnaryData, ServiceError } from '@grpc/grpc-js';
import { startNats, type NatsHandle } from '../../../test/support/backends.js';
import { createdEnvelope, type EventEnvelope } from '../../../test/support/events.js';
import { startStubServer } from '../../../test/support/grpc-stub.js';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { queryRows } from '../../../test/support/pipeline.js';
import { createLogger, type ClockOptions, type GrpcServerHandle } from '@support-agent/shared';
import { knowledge } from '@support-agent/proto';
import { loadDigestConfig, type DigestConfig } from '../src/config.js';
import { start, type DigestServer } from '../src/server.js';
import { LexicalEmbeddings } from '../src/data-access/lexical-embeddings.js';
import { dot } from '../src/domain/cluster-topics.js';
import type { SummaryTopic } from '../src/domain/digest-summary.js';

export { assertAppError, eventually, newOrg, requireEnv } from '../../../test/support/testing.js';

export const testLogger = createLogger('digest-test', process.env.TEST_LOG_LEVEL ?? 'silent');

export type TestDatabase = Awaited<ReturnType<typeof createTestDatabase>>;

/** A suite's own database and NATS server; stop() stops NATS and drops and removes both. */
export interface OwnBackends {
  db: TestDatabase;
  nats: NatsHandle;
  stop(): Promise<void>;
}

/**
 * Starts a database `digest_<name>_…` and a NATS server (store under a temporary directory
 * `digest-<name>-…`) for suites that kill NATS or count every event of the stream.
 */
export async function startOwnBackends(name: string): Promise<OwnBackends> {
  const db = await createTestDatabase(`digest_${name}`);
  const dir = mkdtempSync(join(tmpdir(), `digest-${name}-`));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  let nats: NatsHandle;
  try {
    nats = await startNats(dir);
  } catch (err) {
    await db.drop();
    removeDir();
    throw err;
  }
  return {
    db,
    nats,
    async stop() {
      await nats.stop();
      await db.drop();
      removeDir();
    },
  };
}

/** A durable consumer of this test only: the shared TICKETS stream also carries other suites' events. */
export function newConsumerName(): string {
  return `digest-test-${randomBytes(4).toString('hex')}`;
}

export function testConfig(env: Record<string, string | undefined>): DigestConfig {
  return loadDigestConfig({
    DIGEST_ADDR: '127.0.0.1:0',
    KNOWLEDGE_ADDR: '127.0.0.1:1',
    LOG_LEVEL: 'silent',
    DIGEST_METRICS_PORT: '0',
    DIGEST_SCHEDULER_ENABLED: 'false',
    DIGEST_PULL_EXPIRES_MS: '1000',
    DIGEST_ACK_WAIT_MS: '2000',
    DIGEST_LAG_POLL_MS: '200',
    GRPC_DEADLINE_MS: '2000',
    ...env,
  });
}

import {
  digestClient,
  withClient,
  type DigestClient,
  type RunningService,
} from '../../../test/support/local-clients.js';

export { digestClient, type DigestClient };

export type RunningDigest = RunningService<DigestServer, DigestClient>;

export async function startDigest(
  env: Record<string, string | undefined>,
  options: ClockOptions = {},
): Promise<RunningDigest> {
  return withClient(await start(testConfig(env), testLogger, options), digestClient);
}

// ---------------------------------------------------------------------------------------------
// Ticket events, exactly as services/tickets/src/domain/events.ts writes them

export type TicketEventEnvelope = EventEnvelope<
  'tickets.created' | 'tickets.triaged' | 'tickets.status_changed'
>;

let nextTicketId = 1 + Math.floor(Math.random() * 1_000_000) * 1_000;

export function newTicketId(): number {
  return nextTicketId++;
}

export function createdEvent(
  orgId: string,
  ticketId: number,
  content: string,
  createdAt: Date,
): TicketEventEnvelope {
  return createdEnvelope(orgId, ticketId, content, createdAt);
}

export function triagedEvent(
  orgId: string,
  ticketId: number,
  at: Date,
  opts: { answered: boolean; category?: string; summary?: string },
): TicketEventEnvelope {
  return {
    id: randomUUID(),
    type: 'tickets.triaged',
    org_id: orgId,
    ticket_id: ticketId,
    occurred_at: at.toISOString(),
    data: {
      category: opts.category ?? 'how_to',
      priority: 'medium',
      ai_summary: opts.summary ?? 'Customer asks a question.',
      answered: opts.answered,
      status: opts.answered ? 'resolved' : 'open',
    },
  };
}

export function statusChangedEvent(
  orgId: string,
  ticketId: number,
  at: Date,
  from: string,
  to: string,
): TicketEventEnvelope {
  return {
    id: randomUUID(),
    type: 'tickets.status_changed',
    org_id: orgId,
    ticket_id: ticketId,
    occurred_at: at.toISOString(),
    data: { from, to },
  };
}

/** One ticket's life: created, and optionally triaged (+ resolved when answered). */
export function ticketEvents(
  orgId: string,
  content: string,
  createdAt: Date,
  triage?: { answered: boolean },
): TicketEventEnvelope[] {
  const id = newTicketId();
  const events = [createdEvent(orgId, id, content, createdAt)];
  if (triage) {
    const at = new Date(createdAt.getTime() + 1_000);
    events.push(triagedEvent(orgId, id, at, triage));
    if (triage.answered) events.push(statusChangedEvent(orgId, id, at, 'open', 'resolved'));
  }
  return events;
}

/** Publishes to JetStream the way the tickets outbox relay does (subject = type, Nats-Msg-Id = id). */
export { StreamPublisher as EventPublisher } from '../../../test/support/events.js';

// ---------------------------------------------------------------------------------------------
// MySQL

export { queryRows, scrapeMetrics } from '../../../test/support/pipeline.js';

/** The org's week counts straight from digest_weeks. */
export async function weekCounts(url: string, orgId: string): Promise<Record<string, number>> {
  const rows = await queryRows<{ week_start: string; ticket_count: number }>(
    url,
    'SELECT week_start, ticket_count FROM digest_weeks WHERE org_id = ? ORDER BY week_start',
    [orgId],
  );
  return Object.fromEntries(rows.map((r) => [r.week_start, Number(r.ticket_count)]));
}

export async function processedCount(url: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await queryRows<{ n: number }>(
    url,
    'SELECT COUNT(*) AS n FROM digest_processed_events WHERE event_id IN (?)',
    [ids],
  );
  return Number(rows[0]?.n ?? 0);
}

// ---------------------------------------------------------------------------------------------
// A stand-in knowledge service (KnowledgeService.Search + EmbeddingsService.Embed)

export interface StandInEntry {
  orgId: string;
  id: string;
  question: string;
  answer: string;
}

export interface KnowledgeStandIn {
  address: string;
  embedCalls: number;
  searchCalls: number;
  stop(): Promise<void>;
}

/**
 * Search scores entries by lexical cosine with their question; Embed returns the
 * lexical vectors under a `hashed/…` fingerprint (or fails when `failEmbed`).
 */
export async function startKnowledgeStandIn(
  entries: StandInEntry[],
  opts: { failEmbed?: boolean } = {},
): Promise<KnowledgeStandIn> {
  const lexical = new LexicalEmbeddings();
  const state = { embedCalls: 0, searchCalls: 0 };
  const unimplemented = (_call: unknown, cb: sendUnaryData<never>) =>
    cb({ code: 12, details: 'not in the stand-in' } as ServiceError);
  const handle: GrpcServerHandle = await startStubServer([
    {
      definition: knowledge.KnowledgeServiceService,
      implementation: {
        search: (
          call: ServerUnaryCall<knowledge.SearchRequest, knowledge.SearchResponse>,
          cb: sendUnaryData<knowledge.SearchResponse>,
        ) => {
          state.searchCalls++;
          const q = lexical.embedText(call.request.query);
          const results = entries
            .filter((e) => e.orgId === call.request.orgId)
            .map((e) => ({
              entryId: e.id,
              question: e.question,
              answer: e.answer,
              score: Math.max(0, Math.min(1, dot(q, lexical.embedText(e.question)))),
            }))
            .filter((h) => h.score > 0.05)
            .sort((a, b) => b.score - a.score || (a.entryId < b.entryId ? -1 : 1))
            .slice(0, call.request.limit || 5);
          cb(null, { results });
        },
        upsertEntries: unimplemented,
        deleteEntries: unimplemented,
        countEntries: unimplemented,
      },
    },
    {
      definition: knowledge.EmbeddingsServiceService,
      implementation: {
        embed: (
          call: ServerUnaryCall<knowledge.EmbedRequest, knowledge.EmbedResponse>,
          cb: sendUnaryData<knowledge.EmbedResponse>,
        ) => {
          state.embedCalls++;
          if (opts.failEmbed) {
            cb({ code: 14, details: 'embeddings down' } as ServiceError);
            return;
          }
          cb(null, {
            embeddings: call.request.texts.map((t) => ({
              values: Array.from(lexical.embedText(t)),
            })),
            fingerprint: 'hashed/standin-lexical/1024',
          });
        },
      },
    },
  ]);
  return {
    address: `127.0.0.1:${handle.port}`,
    get embedCalls() {
      return state.embedCalls;
    },
    get searchCalls() {
      return state.searchCalls;
    },
    stop: () => handle.stop(1_000),
  };
}

// ---------------------------------------------------------------------------------------------
// A stand-in OpenAI-compatible server

export interface LlmStandIn {
  baseURL: string;
  requests: number;
  stop(): Promise<void>;
}

/** Answers chat completions with one fixed summary per topic, or fails/hangs as asked. */
export async function startLlmStandIn(mode: 'ok' | 'error' | 'hang'): Promise<LlmStandIn> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      state.requests++;
      if (mode === 'hang') return; // never answers: the client's timeout must fire
      if (mode === 'error') {
        res
          .writeHead(500, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'boom' } }));
        return;
      }
      const request = JSON.parse(body) as { messages: Array<{ role: string; content: string }> };
      const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
      const topics = [...user.matchAll(/<topic number="(\d+)">/g)].map((m) => Number(m[1]));
      const content = JSON.stringify({
        answers: topics.map((n) => ({ topic: n, answer: `LLM summary for topic ${n}.` })),
      });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'test-model',
          choices: [
            {
              index: 0,
              finish_reason: 'stop',
              message: { role: 'assistant', content, refusal: null },
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Paraphrase sets (StackFAQ-style: the same question asked different ways)

export const PASSWORD_RESET = [
  'How do I reset my password?',
  'I forgot my password, how can I reset it?',
  'Password reset email never arrives',
  "Can't log in: I need to reset my password",
];

export const CSV_EXPORT = [
  'How can I export my tickets to CSV?',
  'Is there a way to export the data as a CSV file?',
  'Export to CSV is not working',
];

export const SINGLETONS = ['Does the API support webhooks?', 'Can I delete my account?'];

/** A moment inside the week starting `weekStart` (day 0 = Monday). */
export function inWeek(weekStart: string, day: number, hour = 10, minute = 0): Date {
  const d = new Date(`${weekStart}T00:00:00.000Z`);
  return new Date(d.getTime() + ((day * 24 + hour) * 60 + minute) * 60_000);
}

/** A topic of a structured digest: an answered one with one ticket, unless `over` says otherwise. */
export function summaryTopic(over: Partial<SummaryTopic>): SummaryTopic {
  return {
    id: 'kb:e1',
    title: 'How do I reset my password?',
    answered: true,
    tickets: 1,
    lastWeekTickets: 0,
    trend: undefined,
    answeredAutomatically: 0,
    examples: [],
    answer: undefined,
    ticketIds: [1],
    ...over,
  };
}
