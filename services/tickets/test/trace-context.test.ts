// Trace context across NATS: with tracing on, a CreateTicket made inside a caller's span stores
// the request's traceparent with its outbox row, and the relay publishes the event with a
// `traceparent` header that continues the same trace (a PRODUCER span under the server span),
// so the consumers' work joins the trace of the request that created the ticket.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { traceHeaders } from '@support-agent/shared';
import { startTracing } from '@support-agent/shared/tracing';
import mysql from 'mysql2/promise';
import { connect } from 'nats';
import { createTestDatabase } from '../../../test/support/mysql.js';
import { eventually, newOrg, requireEnv, startService } from './helpers.js';
import { stopAll } from '../../../test/support/testing.js';

const exporter = new InMemorySpanExporter();

/** The traceparent header of the org's first message on stream TICKETS, once it is there. */
async function publishedTraceparent(natsUrl: string, orgId: string): Promise<string | undefined> {
  const nc = await connect({ servers: natsUrl, timeout: 2_000 });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info('TICKETS');
    for (let seq = info.state.last_seq; seq >= info.state.first_seq && seq > 0; seq--) {
      const msg = await jsm.streams.getMessage('TICKETS', { seq });
      if ((msg.json() as { org_id?: string }).org_id !== orgId) continue;
      return msg.header?.get('traceparent') || '';
    }
    return undefined;
  } finally {
    await nc.close();
  }
}

describe('trace context through the outbox', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let service: Awaited<ReturnType<typeof startService>>;
  const natsUrl = requireEnv('TEST_NATS_URL');

  before(async () => {
    await startTracing({ instrument: false, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    db = await createTestDatabase('tickets_trace');
    service = await startService({
      MYSQL_URL: db.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      NATS_URL: natsUrl,
    });
  });

  after(() => stopAll(service, db));

  it('when a ticket is created inside a trace, then its event is published with a traceparent header of that trace', async () => {
    const orgId = newOrg('trace');
    const root = trace.getTracer('test').startSpan('POST /api/v1/agent/tickets');
    const traceId = root.spanContext().traceId;
    await context.with(trace.setSpan(context.active(), root), () =>
      service.client.createTicket({ orgId, content: 'Traced ticket' }),
    );
    root.end();

    const header = await eventually(
      () => publishedTraceparent(natsUrl, orgId),
      20_000,
      'the tickets.created event on the stream',
    );
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(header);
    assert.ok(m, `traceparent header: "${header}"`);
    assert.equal(m[1], traceId, 'the message continues the caller’s trace');

    const spans = await eventually(
      async () => {
        const all = exporter.getFinishedSpans();
        return all.some((s) => s.name === 'tickets.created publish') ? all : undefined;
      },
      5_000,
      'the publish span',
    );
    const server = spans.find(
      (s) =>
        s.kind === SpanKind.SERVER &&
        s.name === 'supportagent.tickets.v1.TicketsService/CreateTicket' &&
        s.spanContext().traceId === traceId,
    );
    const publish = spans.find(
      (s) => s.name === 'tickets.created publish' && s.spanContext().traceId === traceId,
    );
    assert.ok(server && publish);
    assert.equal(publish.kind, SpanKind.PRODUCER);
    assert.equal(publish.parentSpanContext?.spanId, server.spanContext().spanId);
    assert.equal(m[2], publish.spanContext().spanId, 'the header names the publish span');
    assert.equal(publish.attributes['messaging.destination.name'], 'tickets.created');

    // The outbox row kept the request's context (the server span) for the relay.
    const conn = await mysql.createConnection({ uri: db.url });
    try {
      const [rows] = await conn.query(
        `SELECT traceparent FROM tickets_outbox WHERE payload LIKE CONCAT('%"org_id":"', ?, '"%')`,
        [orgId],
      );
      assert.equal(
        (rows as Array<{ traceparent: string }>)[0]?.traceparent,
        `00-${traceId}-${server.spanContext().spanId}-01`,
      );
    } finally {
      await conn.end();
    }
  });

  it('when tickets are created in one CreateTicketBatch, then each event continues the trace of its own traceparent', async () => {
    const orgs = [newOrg('trace-a'), newOrg('trace-b')];
    const roots = orgs.map((o) => trace.getTracer('test').startSpan(`POST tickets ${o}`));
    const traceparents = roots.map(
      (r) => traceHeaders(trace.setSpan(context.active(), r)).traceparent!,
    );
    const { results } = await service.client.createTicketBatch({
      tickets: orgs.map((orgId) => ({ orgId, content: 'Traced in a batch' })),
      traceparents,
    });
    for (const r of roots) r.end();
    assert.deepEqual(
      results.map((r) => r.errorCode),
      ['', ''],
    );
    for (const [i, orgId] of orgs.entries()) {
      const header = await eventually(
        () => publishedTraceparent(natsUrl, orgId),
        20_000,
        `the event of ${orgId}`,
      );
      const traceId = roots[i]!.spanContext().traceId;
      assert.equal(header.split('-')[1], traceId, `${orgId}'s event continues its own trace`);
      const item = exporter
        .getFinishedSpans()
        .find((s) => s.name === 'CreateTicketBatch item' && s.spanContext().traceId === traceId);
      assert.equal(item?.parentSpanContext?.spanId, roots[i]!.spanContext().spanId);
    }
  });
});
