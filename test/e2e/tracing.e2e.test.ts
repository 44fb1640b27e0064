// End-to-end: tracing switched on by configuration alone. Every service process gets
// NODE_OPTIONS="--import @support-agent/shared/tracing" and an OTLP/HTTP endpoint (a collector
// stand-in in this test); one ticket created through the gateway then yields one trace across
// the gateway (HTTP + express), tickets (gRPC server, outbox publish over NATS), answers (NATS
// consumer, its gRPC calls) and knowledge, and the gateway's log line names that trace.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Stack, api, waitFor } from '../support/stack.js';

interface CollectedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

let stack: Stack;
let collector: Server;
const spans: CollectedSpan[] = [];

/** Just enough of an OTLP/HTTP (JSON) trace receiver: POST /v1/traces. */
function startCollector(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body) as { resourceSpans?: any[] };
        for (const rs of doc.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value
            ?.stringValue;
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                name: s.name,
                kind: s.kind,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  collector = await startCollector();
  stack = await Stack.onTestBackends('e2e-trace', {
    env: {
      NODE_OPTIONS: '--import @support-agent/shared/tracing',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      DIGEST_METRICS_PORT: '0',
    },
  });
});

after(async () => {
  await stack?.stop();
  collector?.close();
});

test('when a ticket is created through the gateway, then one trace spans gateway, tickets, NATS, answers and knowledge', async () => {
  const key = await stack.orgWithKey('trace-org');
  await stack.admin('POST', '/admin/v1/orgs/trace-org/kb/entries', [
    {
      id: 'csv',
      question: 'How do I export tickets to CSV?',
      answer: 'In the Tickets view choose Export > CSV.',
    },
  ]);
  const created = await api(stack.baseUrl(), 'POST', '/api/v1/agent/tickets', {
    key,
    body: { content: 'How do I export tickets to CSV?' },
  });
  assert.equal(created.status, 201, created.text);

  // The gateway's HTTP server span is the root of the request's trace.
  const rootOf = () =>
    spans.find(
      (s) =>
        s.service === 'gateway' &&
        s.kind === 2 && // SERVER
        s.name.startsWith('POST') &&
        s.name.endsWith('/tickets') &&
        !s.parentSpanId,
    );
  await waitFor(
    () => rootOf() !== undefined,
    15_000,
    () => `no gateway span: ${names()}`,
  );
  const traceId = rootOf()!.traceId;
  const inTrace = () => spans.filter((s) => s.traceId === traceId);
  const has = (service: string, name: string) =>
    inTrace().some((s) => s.service === service && s.name === name);
  await waitFor(
    () =>
      has('answers', 'tickets.created process') &&
      has('tickets', 'supportagent.tickets.v1.TicketsService/ApplyTriage'),
    30_000,
    () => `incomplete trace: ${names(traceId)}`,
  );

  assert.ok(has('gateway', 'supportagent.tickets.v1.TicketsService/CreateTicket'), 'gRPC client');
  assert.ok(has('tickets', 'supportagent.tickets.v1.TicketsService/CreateTicket'), 'gRPC server');
  assert.ok(has('tickets', 'tickets.created publish'), 'outbox publish');
  assert.ok(has('answers', 'tickets.created process'), 'NATS consumer');
  assert.ok(has('knowledge', 'supportagent.knowledge.v1.KnowledgeService/Search'), 'KB search');
  assert.ok(
    inTrace().some((s) => s.service === 'gateway' && s.name.startsWith('request handler')),
    'express instrumentation',
  );
  // Every span but the root has its parent in the same trace. A consumer's span can be
  // exported before its parent: the digest may process an event before the relay has the
  // PubAck that ends the publish span, so the parents are waited for.
  const orphans = () => {
    const ids = new Set(inTrace().map((s) => s.spanId));
    return inTrace().filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
  };
  await waitFor(
    () => orphans().length === 0,
    15_000,
    () =>
      `orphan spans: ${orphans()
        .map((s) => `${s.service} ${s.name}`)
        .join(', ')}`,
  );

  // Logs name the trace (trace_id on lines written inside a span).
  const gatewayLine = stack.gateways[0]!.logs()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>)
    .find((l) => l.req?.method === 'POST' && l.req?.url === '/api/v1/agent/tickets');
  assert.equal(gatewayLine?.trace_id, traceId);
});

function names(traceId?: string): string {
  return spans
    .filter((s) => !traceId || s.traceId === traceId)
    .map((s) => `${s.service}:${s.name}`)
    .join(', ');
}
