// The shared gRPC clients (packages/shared/src/service-clients.ts) of a service a test started
// on 127.0.0.1:port, with a deadline long enough for a busy test machine.
import { createDigestClient, createTicketsClient } from '@support-agent/shared';

export const ticketsClient = (port: number) =>
  createTicketsClient(`127.0.0.1:${port}`, { deadlineMs: 15_000 });
export type TicketsClient = ReturnType<typeof ticketsClient>;

export const digestClient = (port: number) =>
  createDigestClient(`127.0.0.1:${port}`, { deadlineMs: 20_000 });
export type DigestClient = ReturnType<typeof digestClient>;

/** A service a test started, with a client of it: stop() closes the client, then the service. */
export interface RunningService<S, C> {
  server: S;
  client: C;
  stop(): Promise<void>;
}

export function withClient<
  S extends { port: number; stop(): Promise<void> },
  C extends { close(): void },
>(server: S, client: (port: number) => C): RunningService<S, C> {
  const c = client(server.port);
  return {
    server,
    client: c,
    async stop() {
      c.close();
      await server.stop();
    },
  };
}
