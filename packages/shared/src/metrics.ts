import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type Metric,
} from 'prom-client';
import type { Logger } from './logger.js';

/**
 * The process-wide Prometheus registry: default process metrics, the gRPC RED metrics
 * recorded by unaryHandler / the client interceptor, and the service's own metrics.
 * A service that runs several instances in one process (tests) can keep per-instance
 * metrics in a Registry of its own and serve both (startMetricsServer `registries`).
 */
export const metricsRegistry = new Registry();

/** Seconds: from 1 ms (cache hits) to 10 s (deadline-bound calls). */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels<L extends string> = Partial<Record<L, string | number>>;

/**
 * Returns the metric registered under `name`, creating it on first use. Idempotent, so a
 * module loaded twice (source and build in one test process) never registers a name twice.
 */
function getOrCreate<M extends Metric>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

export function counter<L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  registry: Registry = metricsRegistry,
): Counter<L> {
  return getOrCreate(
    registry,
    name,
    () => new Counter<L>({ name, help, labelNames, registers: [registry] }),
  );
}

export function gauge<L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  registry: Registry = metricsRegistry,
): Gauge<L> {
  return getOrCreate(
    registry,
    name,
    () => new Gauge<L>({ name, help, labelNames, registers: [registry] }),
  );
}

export function histogram<L extends string = never>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets: number[] = LATENCY_BUCKETS,
  registry: Registry = metricsRegistry,
): Histogram<L> {
  return getOrCreate(
    registry,
    name,
    () => new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] }),
  );
}

/** Seconds elapsed since `startedNs` (a process.hrtime.bigint() reading). */
export function secondsSince(startedNs: bigint): number {
  return Number(process.hrtime.bigint() - startedNs) / 1e9;
}

// ---------------------------------------------------------------------------------------------
// gRPC RED metrics (recorded by unaryHandler and the interceptor of createGrpcClient)

const grpcServerRequests = () =>
  counter(
    'grpc_server_requests_total',
    'Unary gRPC calls handled, by service, method and status code.',
    ['service', 'method', 'code'],
  );
const grpcServerDuration = () =>
  histogram(
    'grpc_server_request_duration_seconds',
    'Time to handle a unary gRPC call, by service and method.',
    ['service', 'method'],
  );
const grpcClientRequests = () =>
  counter(
    'grpc_client_requests_total',
    'Unary gRPC calls made, by target address, method (/package.Service/Method) and status code.',
    ['target', 'method', 'code'],
  );
const grpcClientDuration = () =>
  histogram(
    'grpc_client_request_duration_seconds',
    'Time until a unary gRPC call made got its status, by target and method.',
    ['target', 'method'],
  );

export function recordGrpcServerCall(
  labels: Labels<'service' | 'method'>,
  code: string,
  seconds: number,
): void {
  grpcServerRequests().inc({ ...labels, code });
  grpcServerDuration().observe(labels, seconds);
}

export function recordGrpcClientCall(
  labels: Labels<'target' | 'method'>,
  code: string,
  seconds: number,
): void {
  grpcClientRequests().inc({ ...labels, code });
  grpcClientDuration().observe(labels, seconds);
}

// ---------------------------------------------------------------------------------------------
// The /metrics endpoint

export interface MetricsServer {
  /** The bound port (the real one when port 0 was asked for). */
  port: number;
  close(): Promise<void>;
}

let defaultMetricsStarted = false;

/**
 * Serves `GET /metrics` (Prometheus text format) on host:port with node:http: the
 * process-wide registry (plus default process metrics) and any extra `registries`.
 * Port 0 picks a free port. Fails (rejects) when the port cannot be bound.
 */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  logger?: Logger;
  registries?: Registry[];
}): Promise<MetricsServer> {
  if (!defaultMetricsStarted) {
    defaultMetricsStarted = true;
    collectDefaultMetrics({ register: metricsRegistry });
  }
  const registries = [metricsRegistry, ...(options.registries ?? [])];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' })
        .end('method not allowed\n');
      return;
    }
    Promise.all(registries.map((r) => r.metrics())).then(
      (texts) => {
        res.writeHead(200, { 'Content-Type': metricsRegistry.contentType });
        res.end(req.method === 'HEAD' ? undefined : texts.filter(Boolean).join('\n'));
      },
      (err: unknown) => {
        options.logger?.error({ err }, 'collecting metrics failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('collecting metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `metrics endpoint cannot listen on ${options.host}:${options.port} (${err.code ?? err.message}); ` +
            'set METRICS_PORT to a free port, or 0 to disable it',
        ),
      ),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  options.logger?.info({ address: `${options.host}:${bound}` }, 'metrics listening');
  let closed: Promise<void> | undefined;
  return {
    port: bound,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/**
 * Starts the endpoint unless `port` is 0 (disabled): what a service does with METRICS_PORT /
 * METRICS_HOST. A port that cannot be bound (another process on one machine holds it) is
 * logged as a warning and the service runs without metrics: they are not worth an outage.
 * Returns undefined when no endpoint runs.
 */
export async function serveMetrics(
  settings: { port: number; host: string },
  logger: Logger,
  registries?: Registry[],
): Promise<MetricsServer | undefined> {
  if (settings.port === 0) return undefined;
  try {
    return await startMetricsServer({
      host: settings.host,
      port: settings.port,
      logger,
      ...(registries ? { registries } : {}),
    });
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'running without a metrics endpoint');
    return undefined;
  }
}

export { Registry, type Counter, type Gauge, type Histogram };
