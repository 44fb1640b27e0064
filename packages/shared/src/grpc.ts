import {
  InterceptingCall,
  Server,
  ServerCredentials,
  credentials,
  Metadata,
  status as GrpcStatus,
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientUnaryCall,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
  type handleUnaryCall,
  type Interceptor,
  type sendUnaryData,
} from '@grpc/grpc-js';
import {
  INVALID_SPAN_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { health } from '@support-agent/proto';
import type { Logger } from './logger.js';
import { AppError, fromGrpcError, toGrpcError } from './errors.js';
import { recordGrpcClientCall, recordGrpcServerCall, secondsSince } from './metrics.js';
import { releaseClosedHttp2Streams } from './http2-stream-release.js';
import { withPooledSerializers } from './grpc-serializers.js';
import { failSpan, tracer } from './trace-context.js';
import { parseGrpcTarget } from './grpc-target.js';
import { GRPC_CONNECT_TIMEOUT_MS, WatchdogChannel } from './grpc-connect-watchdog.js';

const { HealthCheckResponse_ServingStatus: ServingStatus, HealthService } = health;

/** Keep-alive and retry settings shared by every channel and server. */
export const CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.enable_retries': 1,
  // grpc-js backs off reconnecting to a dead peer up to 120 s, so after a long outage a
  // restarted service stayed unreachable for many seconds; cap it so calls resume within ~2 s.
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 2_000,
  // A name is looked up again at most this often (a replica replaced or added is found within
  // it); no TXT lookups: the service config is ours (grpcServiceConfig below), not the DNS's.
  'grpc.dns_min_time_between_resolutions_ms': 5_000,
  'grpc.service_config_disable_resolution': 1,
};

/**
 * The channel's service config: calls spread over every address of the target (round_robin:
 * one connection per replica, a replica whose connection failed is skipped until it is back),
 * and the `retryable` methods (full paths, `/pkg.Service/Method`; read-only ones) sent again,
 * to another replica, when one fails UNAVAILABLE before answering (a replica killed mid-call),
 * within the call's own deadline.
 */
export function grpcServiceConfig(retryable: readonly string[] = []): string {
  const methods = retryable.map((path) => {
    const [, service, method] = path.split('/');
    return { service, method };
  });
  return JSON.stringify({
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig:
      methods.length === 0
        ? []
        : [
            {
              name: methods,
              retryPolicy: {
                maxAttempts: 3,
                initialBackoff: '0.02s',
                maxBackoff: '0.2s',
                backoffMultiplier: 2,
                retryableStatusCodes: ['UNAVAILABLE'],
              },
            },
          ],
  });
}

const SERVER_OPTIONS: ChannelOptions = {
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 10_000,
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
};

/**
 * Adapts an async function to a grpc-js unary handler: resolved values are sent,
 * thrown AppErrors become gRPC errors carrying their code, anything else is
 * logged and reported as internal_error.
 */
export function unaryHandler<Req, Res>(
  logger: Logger,
  method: string,
  fn: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    const startedNs = process.hrtime.bigint();
    const rpc = splitPath(typeof call.getPath === 'function' ? call.getPath() : '', method);
    // Continue the caller's trace (W3C traceparent in the metadata); a no-op without tracing.
    const parent = propagation.extract(context.active(), call.metadata, METADATA_GETTER);
    const span = tracer().startSpan(
      `${rpc.service}/${rpc.method}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'rpc.system': 'grpc', 'rpc.service': rpc.service, 'rpc.method': rpc.method },
      },
      parent,
    );
    const finish = (code: GrpcStatus) => {
      recordGrpcServerCall(rpc, GrpcStatus[code] ?? String(code), secondsSince(startedNs));
      span.setAttribute('rpc.grpc.status_code', code);
      span.end();
    };
    context
      .with(trace.setSpan(parent, span), () => fn(call.request, call))
      .then(
        (res) => {
          finish(GrpcStatus.OK);
          callback(null, res);
        },
        (err: unknown) => {
          if (!(err instanceof AppError) || !err.isTrusted) {
            logger.error({ err, method, requestId: requestIdOf(call) }, 'grpc handler failed');
            failSpan(span, err);
          }
          const grpcError = toGrpcError(err);
          finish(grpcError.code ?? GrpcStatus.UNKNOWN);
          callback(grpcError as ServiceError);
        },
      );
  };
}

/** "/package.Service/Method" → its parts; `fallback` names the method when the path is unknown. */
function splitPath(path: string, fallback: string): { service: string; method: string } {
  const [, service, method] = path.split('/');
  return service && method ? { service, method } : { service: 'unknown', method: fallback };
}

const METADATA_GETTER: TextMapGetter<Metadata> = {
  keys: (metadata) => Object.keys(metadata.getMap()),
  get: (metadata, key) => {
    const values = metadata.get(key).map(String);
    return values.length > 1 ? values : values[0];
  },
};

const METADATA_SETTER: TextMapSetter<Metadata> = {
  set: (metadata, key, value) => metadata.set(key, value),
};

const HEALTH_SERVICE = 'grpc.health.v1.Health';

/**
 * The interceptor every client of createGrpcClient gets: a CLIENT span per unary call whose
 * context travels in the metadata (W3C traceparent), and the grpc_client_* metrics.
 */
function clientInterceptor(target: string): Interceptor {
  return (options, nextCall) => {
    const path = options.method_definition.path;
    const rpc = splitPath(path, path);
    return new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        const startedNs = process.hrtime.bigint();
        const active = context.active();
        // Health checks (probes, readiness) would only add root spans nobody reads.
        const span =
          rpc.service === HEALTH_SERVICE
            ? trace.wrapSpanContext(INVALID_SPAN_CONTEXT)
            : tracer().startSpan(
                `${rpc.service}/${rpc.method}`,
                {
                  kind: SpanKind.CLIENT,
                  attributes: {
                    'rpc.system': 'grpc',
                    'rpc.service': rpc.service,
                    'rpc.method': rpc.method,
                    'server.address': target,
                  },
                },
                active,
              );
        propagation.inject(trace.setSpan(active, span), metadata, METADATA_SETTER);
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            recordGrpcClientCall(
              { target, method: rpc.method },
              GrpcStatus[status.code] ?? String(status.code),
              secondsSince(startedNs),
            );
            span.setAttribute('rpc.grpc.status_code', status.code);
            if (status.code !== GrpcStatus.OK)
              span.setStatus({ code: SpanStatusCode.ERROR, message: status.details });
            span.end();
            nextStatus(status);
          },
        });
      },
    });
  };
}

export interface HealthReporter {
  setServing(serving: boolean): void;
}

export interface GrpcServerHandle {
  port: number;
  health: HealthReporter;
  /** Fails health first, lets in-flight calls finish (tryShutdown), forces after graceMs. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServiceBinding {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  definition: ServiceDefinition<any>;
  implementation: UntypedServiceImplementation;
}

/**
 * Starts a gRPC server with the given services plus the standard health service
 * (grpc.health.v1). Health reports SERVING for "" and each service name until stop().
 */
export async function startGrpcServer(options: {
  host: string;
  port: number;
  services: ServiceBinding[];
  logger: Logger;
}): Promise<GrpcServerHandle> {
  const server = new Server(SERVER_OPTIONS);
  let serving = true;
  const watchers = new Set<(s: number) => void>();
  const statusOf = () => (serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
  const known = new Set(['', ...options.services.map((s) => serviceName(s.definition))]);

  server.addService(withPooledSerializers(HealthService), {
    check: (
      call: ServerUnaryCall<health.HealthCheckRequest, health.HealthCheckResponse>,
      cb: sendUnaryData<health.HealthCheckResponse>,
    ) => {
      if (!known.has(call.request.service)) {
        cb({ code: 5, details: 'unknown service' } as ServiceError);
        return;
      }
      cb(null, { status: statusOf() });
    },
    watch: (
      call: import('@grpc/grpc-js').ServerWritableStream<
        health.HealthCheckRequest,
        health.HealthCheckResponse
      >,
    ) => {
      const send = (status: number) => call.write({ status });
      send(known.has(call.request.service) ? statusOf() : ServingStatus.SERVICE_UNKNOWN);
      watchers.add(send);
      call.on('cancelled', () => watchers.delete(send));
    },
  });
  // Answers encoded with the reused protobuf writer (grpc-serializers.ts).
  for (const s of options.services) {
    server.addService(withPooledSerializers(s.definition), s.implementation);
  }

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${options.host}:${options.port}`,
      ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );

  const healthReporter: HealthReporter = {
    setServing(value) {
      serving = value;
      for (const w of watchers) w(statusOf());
    },
  };

  return {
    port,
    health: healthReporter,
    async stop(graceMs = 10_000) {
      healthReporter.setServing(false);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

function serviceName(definition: ServiceDefinition): string {
  const first = Object.values(definition)[0];
  // Paths look like "/package.Service/Method".
  return first ? (first.path.split('/')[1] ?? '') : '';
}

/**
 * Creates a client for a generated ts-proto client constructor with shared channel options;
 * `address` is a grpc-js target (grpc-target.ts: one endpoint, a DNS name, or a list).
 */
export function createGrpcClient<C>(
  ClientCtor: new (
    address: string,
    creds: ReturnType<typeof credentials.createInsecure>,
    options?: ChannelOptions,
  ) => C,
  address: string,
  /** Methods retried on another replica after UNAVAILABLE (grpcServiceConfig). */
  retryable: readonly string[] = [],
  /** A connection attempt unanswered this long is abandoned for a fresh one (WatchdogChannel). */
  connectTimeoutMs = GRPC_CONNECT_TIMEOUT_MS,
): C {
  // Finished calls' state otherwise survives every scavenge (see http2-stream-release.ts), and
  // every request would define Node 20's deprecated accessor (http2-request-bind.ts).
  releaseClosedHttp2Streams();
  const target = parseGrpcTarget(address);
  return new ClientCtor(
    'error' in target ? address : target.address,
    credentials.createInsecure(),
    {
      ...CHANNEL_OPTIONS,
      'grpc.service_config': grpcServiceConfig(retryable),
      interceptors: [clientInterceptor(address)],
      channelFactoryOverride: (
        channelTarget: string,
        creds: ChannelCredentials,
        options: ChannelOptions,
      ) => new WatchdogChannel(channelTarget, creds, options, connectTimeoutMs),
    },
  );
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

export interface CallSettings {
  /** Deadline in milliseconds from now; every call has one. */
  timeoutMs?: number;
  requestId?: string;
}

export const DEFAULT_DEADLINE_MS = 5_000;

/**
 * Calls a unary method with a deadline and returns a promise. Failures become
 * AppErrors (service_unavailable when the peer is down or too slow).
 */
export function callUnary<Req, Res>(
  method: UnaryMethod<Req, Res>,
  request: Req,
  settings: CallSettings = {},
): Promise<Res> {
  const metadata = new Metadata();
  if (settings.requestId) metadata.set('x-request-id', settings.requestId);
  const deadline = new Date(Date.now() + (settings.timeoutMs ?? DEFAULT_DEADLINE_MS));
  return new Promise<Res>((resolve, reject) => {
    // grpc-js captures the caller's stack on every call (`new Error()`), only to append it to a
    // failed call's error, which becomes an AppError here anyway. Capturing it costs ≈ 5 µs a
    // call, 4–5 % of the gateway's CPU per search and per list (docs/performance.md), so the
    // call is made with stack traces off: a failed call's cause carries its message, no stack.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      method(request, metadata, { deadline }, (err, res) =>
        err ? reject(fromGrpcError(err)) : resolve(res),
      );
    } finally {
      Error.stackTraceLimit = limit;
    }
  });
}

/** Asks a server's standard health service whether it is serving. */
export async function checkHealth(
  address: string,
  service = '',
  timeoutMs = 1_000,
): Promise<boolean> {
  const client = createGrpcClient(health.HealthClient, address, [`/${HEALTH_SERVICE}/Check`]);
  try {
    const res = await callUnary(client.check.bind(client), { service }, { timeoutMs });
    return res.status === ServingStatus.SERVING;
  } catch {
    return false;
  } finally {
    client.close();
  }
}

/** The request id a gateway attached to this call, if any. */
export function requestIdOf(call: { metadata: Metadata }): string | undefined {
  const v = call.metadata.get('x-request-id')[0];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The request id of a batch call that names each item's request: their ids comma-separated,
 * one per item in order (the gateway's request ids hold no commas), read by batchRequestIdsOf.
 */
export function batchRequestId(itemRequestIds: readonly (string | undefined)[]): string {
  return itemRequestIds.map((id) => id ?? '').join(',');
}

/**
 * The request id of each item of a batch call: one per item when the call's id lists them
 * (batchRequestId); any other id (answers' one id for a triage batch) stands for every item.
 */
export function batchRequestIdsOf(
  call: { metadata: Metadata },
  items: number,
): (item: number) => string | undefined {
  const requestId = requestIdOf(call);
  const ids = requestId?.split(',');
  return ids?.length === items ? (i) => ids[i] : () => requestId;
}
