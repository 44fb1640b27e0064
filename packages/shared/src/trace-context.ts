import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';

/**
 * Tracing through the OpenTelemetry API only. Until a tracer provider and propagator are
 * registered (`--import @support-agent/shared/tracing` with OTEL_* set), every call here is a
 * no-op: spans are non-recording, nothing is injected, nothing is extracted.
 */
export const TRACER_NAME = '@support-agent/shared';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/** Trace headers (`traceparent`, `tracestate`) of `ctx`; empty when tracing is off. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The `traceparent` of the active context, to store with work done later (outbox rows). */
export function currentTraceparent(): string | undefined {
  return traceHeaders().traceparent;
}

/** The context a set of trace headers describes (ROOT when none or tracing is off). */
export function contextFromHeaders(
  headers: Record<string, string | undefined> | undefined,
): Context {
  if (!headers) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, RECORD_GETTER);
}

/**
 * The W3C trace headers of a message (anything with `get(name)`, like NATS headers, which
 * answer '' for a missing one); undefined when it carries no traceparent.
 */
export function traceHeadersOf(
  headers: { get(name: string): string | undefined } | undefined,
): Record<string, string> | undefined {
  const traceparent = headers?.get('traceparent');
  if (!traceparent) return undefined;
  const tracestate = headers?.get('tracestate');
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

const RECORD_GETTER: TextMapGetter<Record<string, string | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** Trace ids of the active span, for log lines; undefined without an active valid span. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const sc = trace.getActiveSpan()?.spanContext();
  if (!sc || !trace.isSpanContextValid(sc)) return undefined;
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/** Ends `span` with an error status describing `err`. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: err instanceof Error ? err.message : String(err),
  });
}

/**
 * Runs `fn` in a CONSUMER span that continues the trace of a message's headers (the
 * producer's `traceparent`), so the work a message causes (gRPC calls, logs) joins the
 * trace of the request that produced it.
 */
export function withConsumerSpan<T>(
  name: string,
  headers: Record<string, string | undefined> | undefined,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  return withSpan(name, SpanKind.CONSUMER, contextFromHeaders(headers), attributes, fn);
}

/**
 * Runs one item of a batch call in a SERVER span continuing the item's own `traceparent` (the
 * request it came from, which a batch's metadata cannot carry for every item), so what the
 * item does (logs, the traceparent stored with its outbox row) joins that request's trace;
 * without one, in the batch call's own context.
 */
export function withBatchItemSpan<T>(
  name: string,
  traceparent: string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  if (!traceparent) return fn();
  return withSpan(name, SpanKind.SERVER, contextFromHeaders({ traceparent }), {}, fn);
}

async function withSpan<T>(
  name: string,
  kind: SpanKind,
  parent: Context,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(name, { kind, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), fn);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Starts a PRODUCER span continuing `traceparent` (captured when the message was created)
 * and returns it with the headers to send, which carry the new span.
 */
export function startProducerSpan(
  name: string,
  traceparent: string | null | undefined,
  attributes: Attributes,
): { span: Span; headers: Record<string, string> } {
  const parent = traceparent ? contextFromHeaders({ traceparent }) : ROOT_CONTEXT;
  const span = tracer().startSpan(name, { kind: SpanKind.PRODUCER, attributes }, parent);
  return { span, headers: traceHeaders(trace.setSpan(parent, span)) };
}
