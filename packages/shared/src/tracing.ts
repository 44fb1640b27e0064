/**
 * OpenTelemetry tracing, switched on by configuration and injected at start-up:
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 \
 *   NODE_OPTIONS="--import @support-agent/shared/tracing" node services/tickets/dist/main.js
 *
 * Imported this way (before the service's own modules), it registers a NodeTracerProvider
 * (OTLP/HTTP exporter, batch span processor, W3C trace-context propagation, resource
 * `service.name` = OTEL_SERVICE_NAME or the service folder name) and the http + express
 * auto-instrumentations (ESM loader hook limited to those modules). gRPC needs no
 * instrumentation of its own: the shared helpers (createGrpcClient's interceptor,
 * unaryHandler) create the client and server spans and carry `traceparent` in the metadata.
 *
 * With none of OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_TRACES_EXPORTER=otlp|console set (or with OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none) importing this module does nothing: no SDK is loaded, and the
 * API calls in the code stay no-ops.
 */
import { register } from 'node:module';
import { basename, dirname, sep } from 'node:path';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { addExitHook } from './lifecycle.js';

export interface TracingOptions {
  /** Default: OTEL_SERVICE_NAME, else the folder under services/ of the entry script. */
  serviceName?: string;
  /** Default: one BatchSpanProcessor per exporter named in OTEL_TRACES_EXPORTER (default otlp). */
  spanProcessors?: SpanProcessor[];
  /** Registers the ESM hook and the http + express instrumentations (default true). */
  instrument?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Whether the environment asks for traces (see the module comment). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = exportersOf(env);
  if (exporters.includes('none')) return false;
  if (exporters.some((e) => e === 'otlp' || e === 'console')) return true;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

function exportersOf(env: NodeJS.ProcessEnv): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
}

/** `…/services/<name>/dist/main.js` → `<name>`; anything else → the script's folder name. */
export function defaultServiceName(entry: string | undefined = process.argv[1]): string {
  if (!entry) return 'support-agent';
  const parts = entry.split(sep);
  const i = parts.lastIndexOf('services');
  if (i >= 0 && parts[i + 1]) return parts[i + 1]!;
  return basename(dirname(entry)) || 'support-agent';
}

/** Modules the ESM hook wraps: only what the instrumentations patch, nothing else. */
const HOOKED_MODULES = ['express', 'http', 'https'];

let started: Promise<NodeTracerProvider> | undefined;

/**
 * Registers the global tracer provider, context manager and propagator (once per process;
 * later calls return the same provider). Spans still buffered are flushed at a graceful stop
 * (onShutdownSignal's exit hooks).
 */
export function startTracing(options: TracingOptions = {}): Promise<NodeTracerProvider> {
  started ??= setUp(options);
  return started;
}

async function setUp(options: TracingOptions): Promise<NodeTracerProvider> {
  const env = options.env ?? process.env;
  const instrument = options.instrument ?? true;
  // The hook must be in place before express or http is imported by the service.
  if (instrument) {
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
      data: { include: HOOKED_MODULES },
    });
  }
  const [{ NodeTracerProvider }, base, { resourceFromAttributes, envDetector, detectResources }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
    ]);

  let spanProcessors = options.spanProcessors;
  if (!spanProcessors) {
    spanProcessors = [];
    const exporters = exportersOf(env).filter((e) => e !== 'none');
    for (const name of exporters.length > 0 ? exporters : ['otlp']) {
      if (name === 'console') {
        spanProcessors.push(new base.BatchSpanProcessor(new base.ConsoleSpanExporter()));
      } else if (name === 'otlp') {
        // Reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT itself.
        const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
        spanProcessors.push(new base.BatchSpanProcessor(new OTLPTraceExporter()));
      } else {
        process.stderr.write(`tracing: unsupported OTEL_TRACES_EXPORTER "${name}" ignored\n`);
      }
    }
  }

  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win over the default name.
  const resource = resourceFromAttributes({
    'service.name': options.serviceName ?? defaultServiceName(),
  }).merge(detectResources({ detectors: [envDetector] }));

  const provider = new NodeTracerProvider({ resource, spanProcessors });
  // AsyncLocalStorage context manager, W3C tracecontext + baggage propagators.
  provider.register();

  if (instrument) {
    const [{ registerInstrumentations }, { HttpInstrumentation }, { ExpressInstrumentation }] =
      await Promise.all([
        import('@opentelemetry/instrumentation'),
        import('@opentelemetry/instrumentation-http'),
        import('@opentelemetry/instrumentation-express'),
      ]);
    const instrumentations: Instrumentation[] = [
      new HttpInstrumentation({
        // Probes and scrapes are not traffic worth tracing.
        ignoreIncomingRequestHook: (req) =>
          /^\/(metrics|healthz|readyz|livez)\b/.test(req.url ?? ''),
      }),
      new ExpressInstrumentation(),
    ];
    registerInstrumentations({ tracerProvider: provider, instrumentations });
  }

  addExitHook(() => provider.shutdown());
  return provider;
}

if (tracingRequested()) await startTracing();
