import {
  Server,
  ServerCredentials,
  credentials,
  Metadata,
  type CallOptions,
  type ChannelOptions,
  type ClientUnaryCall,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
  type handleUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { health } from '@support-agent/proto';
import type { Logger } from './logger.js';
import { AppError, fromGrpcError, toGrpcError } from './errors.js';

const { HealthCheckResponse_ServingStatus: ServingStatus, HealthService } = health;

/** Keep-alive and retry settings shared by every channel and server. */
export const CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
  'grpc.enable_retries': 1,
};

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
    fn(call.request, call).then(
      (res) => callback(null, res),
      (err: unknown) => {
        if (!(err instanceof AppError) || !err.isTrusted) {
          logger.error({ err, method }, 'grpc handler failed');
        }
        callback(toGrpcError(err) as ServiceError);
      },
    );
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

  server.addService(HealthService, {
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
  for (const s of options.services) server.addService(s.definition, s.implementation);

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

/** Creates a client for a generated ts-proto client constructor with shared channel options. */
export function createGrpcClient<C>(
  ClientCtor: new (
    address: string,
    creds: ReturnType<typeof credentials.createInsecure>,
    options?: ChannelOptions,
  ) => C,
  address: string,
): C {
  return new ClientCtor(address, credentials.createInsecure(), CHANNEL_OPTIONS);
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
    method(request, metadata, { deadline }, (err, res) =>
      err ? reject(fromGrpcError(err)) : resolve(res),
    );
  });
}

/** Asks a server's standard health service whether it is serving. */
export async function checkHealth(
  address: string,
  service = '',
  timeoutMs = 1_000,
): Promise<boolean> {
  const client = createGrpcClient(health.HealthClient, address);
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
