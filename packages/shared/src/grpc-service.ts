// The gRPC half of a service's start()/stop(), the same in every gRPC service: serve and say
// where, then stop in the one order (health fails, work drains, in-flight calls finish, the
// rest closes).
import { startGrpcServer, type GrpcServerHandle, type ServiceBinding } from './grpc.js';
import { Closers, once } from './lifecycle.js';
import type { Logger } from './logger.js';

/** What a gRPC service's start() returns. */
export interface GrpcServiceHandle {
  /** The bound gRPC port (the real one when the service's `*_ADDR` asked for port 0). */
  port: number;
  /** Graceful, in gracefulStop's order; the service's start() says what drains. */
  stop(): Promise<void>;
}

/** start() options of a service whose clock tests move. */
export interface ClockOptions {
  /** Defaults to the real clock. */
  now?: () => Date;
}

/**
 * Starts `services` (plus health) on `address` and logs `<name> service listening` there. The
 * handle stops once: a later stop() (a closer run after the graceful one) waits for the first.
 */
export async function serveGrpc(
  name: string,
  address: { host: string; port: number },
  logger: Logger,
  ...services: ServiceBinding[]
): Promise<GrpcServerHandle> {
  const grpc = await startGrpcServer({ host: address.host, port: address.port, services, logger });
  logger.info({ address: `${address.host}:${grpc.port}` }, `${name} service listening`);
  let stopping: Promise<void> | undefined;
  return { ...grpc, stop: (graceMs) => (stopping ??= grpc.stop(graceMs)) };
}

/**
 * A service's stop(), run at most once: health NOT_SERVING, then `drain` (work to finish while
 * the server still answers), then in-flight calls get `graceMs`, then what start() opened
 * closes, newest first.
 */
export function gracefulStop(
  name: string,
  grpc: GrpcServerHandle,
  graceMs: number,
  closers: Closers,
  drain?: () => Promise<void>,
): () => Promise<void> {
  return once(async () => {
    grpc.health.setServing(false);
    await drain?.();
    await grpc.stop(graceMs);
    await closers.closeAll();
    closers.logger.info(`${name} service stopped`);
  });
}

/**
 * Runs a service's start-up with one Closers: each part opened registers its close there, and
 * when a later step throws, what was opened so far is closed (newest first) and the error
 * rethrown.
 */
export async function openWithClosers<T>(
  logger: Logger,
  open: (closers: Closers) => Promise<T>,
): Promise<T> {
  const closers = new Closers(logger);
  try {
    return await open(closers);
  } catch (err) {
    await closers.closeAll();
    throw err;
  }
}
