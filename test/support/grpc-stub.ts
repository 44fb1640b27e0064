// Stand-ins for the services a test's subject calls: real gRPC servers (the shared
// startGrpcServer, health service included) answering with the test's handlers.
import {
  createLogger,
  startGrpcServer,
  type GrpcServerHandle,
  type ServiceBinding,
} from '@support-agent/shared';

const silent = createLogger('grpc-stub', process.env.TEST_LOG_LEVEL ?? 'silent');

/** A gRPC server on 127.0.0.1 serving `services` (port 0: a free one). */
export function startStubServer(services: ServiceBinding[], port = 0): Promise<GrpcServerHandle> {
  return startGrpcServer({ host: '127.0.0.1', port, logger: silent, services });
}
