// Metrics and trace propagation of the shared gRPC helpers: a client made by createGrpcClient
// calling a server whose handlers are unaryHandlers records the RED metrics on both sides,
// and, with tracing on, the client span and the server span belong to one trace.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { knowledge } from '@support-agent/proto';
import {
  AppError,
  callUnary,
  createGrpcClient,
  createLogger,
  metricsRegistry,
  serveMetrics,
  startGrpcServer,
  startMetricsServer,
  traceHeaders,
  unaryHandler,
  withConsumerSpan,
  type GrpcServerHandle,
  type MetricsServer,
} from '@support-agent/shared';
import { defaultServiceName, startTracing, tracingRequested } from '@support-agent/shared/tracing';

const SERVICE = 'supportagent.knowledge.v1.KnowledgeService';
const exporter = new InMemorySpanExporter();
const logger = createLogger('test', 'silent');
let server: GrpcServerHandle;
let metrics: MetricsServer;
let client: InstanceType<typeof knowledge.KnowledgeServiceClient>;
let target: string;

const notUsed = unaryHandler(logger, 'NotUsed', async (): Promise<never> => {
  throw new AppError('internal_error', 'not used');
});

before(async () => {
  await startTracing({ instrument: false, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [
      {
        definition: knowledge.KnowledgeServiceService,
        implementation: {
          countEntries: unaryHandler(
            logger,
            'CountEntries',
            async (req: knowledge.CountEntriesRequest) => {
              if (!req.orgId) throw new AppError('invalid_request', 'org_id is required');
              return { count: 7 };
            },
          ),
          search: notUsed,
          upsertEntries: notUsed,
          deleteEntries: notUsed,
        },
      },
    ],
  });
  target = `127.0.0.1:${server.port}`;
  client = createGrpcClient(knowledge.KnowledgeServiceClient, target);
  metrics = await startMetricsServer({ host: '127.0.0.1', port: 0 });
});

after(async () => {
  client.close();
  await server.stop(0);
  await metrics.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${metrics.port}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return res.text();
}

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

describe('metrics', () => {
  it('when unary calls succeed and fail, then both sides count them by method and code, with latency histograms', async () => {
    await callUnary(client.countEntries.bind(client), { orgId: 'acme' });
    await callUnary(client.countEntries.bind(client), { orgId: 'acme' });
    await assert.rejects(callUnary(client.countEntries.bind(client), { orgId: '' }), {
      code: 'invalid_request',
    });
    const text = await scrape();
    const server = { service: SERVICE, method: 'CountEntries' };
    assert.equal(sample(text, 'grpc_server_requests_total', { ...server, code: 'OK' }), 2);
    assert.equal(
      sample(text, 'grpc_server_requests_total', { ...server, code: 'INVALID_ARGUMENT' }),
      1,
    );
    assert.equal(sample(text, 'grpc_server_request_duration_seconds_count', server), 3);
    const clientLabels = { target, method: 'CountEntries' };
    assert.equal(sample(text, 'grpc_client_requests_total', { ...clientLabels, code: 'OK' }), 2);
    assert.equal(sample(text, 'grpc_client_request_duration_seconds_count', clientLabels), 3);
    // Default process metrics come with every endpoint.
    assert.ok(sample(text, 'process_cpu_user_seconds_total', {}) !== undefined);
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds', {}) !== undefined);
  });

  it('when a path other than /metrics or a method other than GET is asked for, then 404 and 405', async () => {
    assert.equal((await fetch(`http://127.0.0.1:${metrics.port}/other`)).status, 404);
    const post = await fetch(`http://127.0.0.1:${metrics.port}/metrics`, { method: 'POST' });
    assert.equal(post.status, 405);
  });

  it('when the port is taken, then starting fails with a message naming METRICS_PORT, and a service runs on without metrics', async () => {
    await assert.rejects(
      startMetricsServer({ host: '127.0.0.1', port: metrics.port }),
      /METRICS_PORT/,
    );
    assert.equal(await serveMetrics({ host: '127.0.0.1', port: metrics.port }, logger), undefined);
    assert.equal(await serveMetrics({ host: '127.0.0.1', port: 0 }, logger), undefined);
  });

  it('when a metric is asked for twice, then the registry holds it once', async () => {
    const { counter } = await import('@support-agent/shared');
    assert.equal(counter('test_once_total', 'x'), counter('test_once_total', 'x'));
    assert.equal(
      (await metricsRegistry.getMetricsAsJSON()).filter((m) => m.name === 'test_once_total').length,
      1,
    );
  });
});

describe('tracing', () => {
  it('when a gateway-like caller makes a gRPC call inside its span, then the client and server spans share its trace and nest', async () => {
    exporter.reset();
    const root = trace.getTracer('test').startSpan('GET /api/v1/agent/kb/search');
    await context.with(trace.setSpan(context.active(), root), () =>
      callUnary(client.countEntries.bind(client), { orgId: 'acme' }),
    );
    root.end();
    const spans = exporter.getFinishedSpans();
    const clientSpan = spans.find((s) => s.kind === 2 && s.name === `${SERVICE}/CountEntries`);
    const serverSpan = spans.find((s) => s.kind === 1 && s.name === `${SERVICE}/CountEntries`);
    assert.ok(clientSpan && serverSpan, `spans: ${spans.map((s) => s.name).join(', ')}`);
    const traceId = root.spanContext().traceId;
    assert.equal(clientSpan.spanContext().traceId, traceId);
    assert.equal(serverSpan.spanContext().traceId, traceId);
    assert.equal(clientSpan.parentSpanContext?.spanId, root.spanContext().spanId);
    assert.equal(serverSpan.parentSpanContext?.spanId, clientSpan.spanContext().spanId);
    assert.equal(serverSpan.attributes['rpc.method'], 'CountEntries');
  });

  it('when a message carries the producer traceparent, then the consumer span and the calls it makes join that trace', async () => {
    exporter.reset();
    const producer = trace.getTracer('test').startSpan('CreateTicket');
    const headers = traceHeaders(trace.setSpan(context.active(), producer));
    producer.end();
    assert.match(headers.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await withConsumerSpan('tickets.created process', headers, {}, () =>
      callUnary(client.countEntries.bind(client), { orgId: 'acme' }),
    );
    const spans = exporter.getFinishedSpans();
    const consumer = spans.find((s) => s.name === 'tickets.created process');
    assert.ok(consumer);
    assert.equal(consumer.spanContext().traceId, producer.spanContext().traceId);
    assert.equal(consumer.parentSpanContext?.spanId, producer.spanContext().spanId);
    const server = spans.find((s) => s.kind === 1 && s.name === `${SERVICE}/CountEntries`);
    assert.equal(server?.spanContext().traceId, producer.spanContext().traceId);
  });

  it('when no OTEL_* variable asks for traces, then the tracing entry point stays off', () => {
    assert.equal(tracingRequested({}), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
    assert.equal(
      tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }),
      false,
    );
    assert.equal(
      tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }),
      false,
    );
    assert.equal(defaultServiceName('/app/services/tickets/dist/main.js'), 'tickets');
  });
});

describe('callUnary', () => {
  it('when calls succeed, fail or throw, then Error.stackTraceLimit is what it was and failures are AppErrors', async () => {
    const limit = Error.stackTraceLimit;
    await callUnary(client.countEntries.bind(client), { orgId: 'acme' });
    assert.equal(Error.stackTraceLimit, limit);
    const failed = await callUnary(client.countEntries.bind(client), { orgId: '' }).catch(
      (err: unknown) => err,
    );
    assert.ok(failed instanceof AppError);
    assert.equal(failed.code, 'invalid_request');
    assert.equal(Error.stackTraceLimit, limit);
    const throwing = () => {
      throw new Error('no channel');
    };
    await assert.rejects(callUnary(throwing, {}), /no channel/);
    assert.equal(Error.stackTraceLimit, limit);
  });
});
