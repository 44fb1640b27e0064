// Trace context from NATS: a ticket event whose message carries a `traceparent` header (as the
// tickets outbox relay sends it) is handled inside a CONSUMER span of that trace, so the triage's
// gRPC calls and log lines join the trace of the request that created the ticket. Also the
// consumer's backlog (triage_consumer_pending). Uses its own NATS server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '@support-agent/shared';
import { startTracing } from '@support-agent/shared/tracing';
import { connect, headers, type NatsConnection } from 'nats';
import { eachOf, JetStreamTicketConsumer, TRIAGE_CONSUMER } from '@support-agent/events';
import { startNats, type NatsHandle } from '../../../test/support/backends.js';
import { EventPublisher, ticketCreated } from './support/events.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

describe('trace context of ticket events', () => {
  const exporter = new InMemorySpanExporter();
  let dir: string;
  let nats: NatsHandle;
  let nc: NatsConnection;
  let source: JetStreamTicketConsumer;

  before(async () => {
    await startTracing({ instrument: false, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    dir = mkdtempSync(join(tmpdir(), 'answers-trace-'));
    nats = await startNats(join(dir, 'nats'));
    await (await EventPublisher.connect(nats.url)).close();
    nc = await connect({ servers: nats.url });
  });

  after(async () => {
    await source?.stop();
    await nc?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when an event carries a traceparent header, then it is handled in a consumer span of that trace', async () => {
    const seen: Array<{ traceId: string | undefined; ticketId: number }> = [];
    source = new JetStreamTicketConsumer(nats.url, createLogger('test', 'silent'), {
      consumer: TRIAGE_CONSUMER,
      ackWaitMs: 30_000,
      concurrency: 1,
      replicas: 1,
      pullExpiresMs: 1_000,
    });
    source.start(async ({ event }) => {
      seen.push({
        traceId: trace.getActiveSpan()?.spanContext().traceId,
        ticketId: event.ticket_id,
      });
      return { kind: 'ack' };
    });

    const h = headers();
    h.set('traceparent', `00-${TRACE_ID}-${PARENT_SPAN}-01`);
    const event = ticketCreated('acme', 1, 'traced');
    await nc.jetstream().publish('tickets.created', JSON.stringify(event), {
      msgID: event.id,
      headers: h,
    });
    const untraced = ticketCreated('acme', 2, 'not traced');
    await nc.jetstream().publish('tickets.created', JSON.stringify(untraced), {
      msgID: untraced.id,
    });

    const until = Date.now() + 15_000;
    while (seen.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen.length, 2);
    assert.equal(seen[0]!.traceId, TRACE_ID, 'the handler runs in the producer’s trace');
    assert.notEqual(seen[1]!.traceId, TRACE_ID, 'a message without the header starts its own');

    const consumer = exporter.getFinishedSpans().find((s) => s.spanContext().traceId === TRACE_ID);
    assert.ok(consumer);
    assert.equal(consumer.kind, SpanKind.CONSUMER);
    assert.equal(consumer.name, 'tickets.created process');
    assert.equal(consumer.parentSpanContext?.spanId, PARENT_SPAN);
    assert.equal(consumer.attributes['messaging.consumer.group.name'], 'answers-triage');

    // Both acknowledged: nothing pending on the durable consumer.
    let backlog: number | undefined;
    while (Date.now() < until) {
      backlog = await source.backlog();
      if (backlog === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(backlog, 0);
  });

  it('when events are handed over in a batch, then each is handled in a consumer span of its own trace', async () => {
    await source?.stop();
    const traces = ['1', '2', '3'].map((d) => d.repeat(32));
    const seen = new Map<number, string | undefined>();
    const batches: number[] = [];
    source = new JetStreamTicketConsumer(nats.url, createLogger('test', 'silent'), {
      consumer: TRIAGE_CONSUMER,
      ackWaitMs: 30_000,
      concurrency: 1,
      batchSize: 8,
      replicas: 1,
      pullExpiresMs: 1_000,
    });
    const events = traces.map((_, i) => ticketCreated('acme', 10 + i, `batched ${i}`));
    for (const [i, event] of events.entries()) {
      const h = headers();
      h.set('traceparent', `00-${traces[i]}-${PARENT_SPAN}-01`);
      await nc.jetstream().publish('tickets.created', JSON.stringify(event), {
        msgID: event.id,
        headers: h,
      });
    }
    const handle = eachOf(async ({ event }) => {
      seen.set(event.ticket_id, trace.getActiveSpan()?.spanContext().traceId);
      return { kind: 'ack' };
    });
    source.startBatches(async (deliveries) => {
      batches.push(deliveries.length);
      return handle(deliveries);
    });
    const until = Date.now() + 15_000;
    while (seen.size < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      events.map((e) => seen.get(e.ticket_id)),
      traces,
    );
    assert.ok(
      batches.some((n) => n > 1),
      `handed over together (${batches.join(', ')})`,
    );
    for (const traceId of traces) {
      const span = exporter.getFinishedSpans().find((s) => s.spanContext().traceId === traceId);
      assert.equal(span?.name, 'tickets.created process');
      assert.equal(span?.parentSpanContext?.spanId, PARENT_SPAN);
    }
  });
});
