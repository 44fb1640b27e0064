// A connection attempt that is never answered (a blackholed SYN, a peer that accepts but never
// speaks HTTP/2) is abandoned after the connect timeout and a fresh one made, so a client
// reconnects within that bound of the peer coming back instead of waiting on the stale attempt.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { health } from '@support-agent/proto';
import {
  WatchdogChannel,
  callUnary,
  createGrpcClient,
  createLogger,
  startGrpcServer,
  type GrpcServerHandle,
} from '@support-agent/shared';

const CONNECT_TIMEOUT_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A link to the real server: while `silent`, connections are accepted and held without a byte
 * either way (and stay so after the heal, like a connect whose SYN is lost); afterwards new
 * connections are relayed to the server.
 */
class Link {
  silent = true;
  readonly held: Socket[] = [];
  readonly server: Server;
  constructor(upstreamPort: number) {
    this.server = createServer((socket) => {
      if (this.silent) {
        socket.pause();
        this.held.push(socket);
        return;
      }
      const upstream = connect(upstreamPort, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      const end = () => (socket.destroy(), upstream.destroy());
      socket.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
  }
  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        resolve((this.server.address() as { port: number }).port);
      }),
    );
  }
  close(): void {
    this.held.forEach((s) => s.destroy());
    this.server.close();
  }
}

describe('gRPC connect watchdog', () => {
  let server: GrpcServerHandle;
  let link: Link;
  let linkPort: number;
  before(async () => {
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [],
      logger: createLogger('watchdog-test', 'silent'),
    });
    link = new Link(server.port);
    linkPort = await link.listen();
  });
  after(async () => {
    link.close();
    await server.stop(100);
  });

  const check = (client: health.HealthClient, timeoutMs: number) =>
    callUnary(client.check.bind(client), { service: '' }, { timeoutMs }).then(
      () => true,
      () => false,
    );

  it('when a connection attempt is never answered and the peer comes back, then calls succeed within the connect timeout', async () => {
    const client = createGrpcClient(
      health.HealthClient,
      `127.0.0.1:${linkPort}`,
      [],
      CONNECT_TIMEOUT_MS,
    );
    try {
      assert.equal(await check(client, 1_500), false, 'no answer through the silent link');
      assert.ok(link.held.length >= 1, 'the client connected to the silent link');
      link.silent = false;
      const healed = Date.now();
      let ok = false;
      while (!ok && Date.now() - healed < 10_000) ok = await check(client, 500);
      const backAfter = Date.now() - healed;
      assert.ok(ok, 'calls succeed again after the heal');
      assert.ok(
        backAfter <= CONNECT_TIMEOUT_MS + 1_500,
        `back after ${backAfter} ms (connect timeout ${CONNECT_TIMEOUT_MS} ms)`,
      );
      const channel = client.getChannel();
      assert.ok(channel instanceof WatchdogChannel);
      assert.ok(channel.replaced >= 1, 'the stuck channel was replaced');
    } finally {
      client.close();
    }
  });

  it('when a connection is up, then it is kept however long the client stays', async () => {
    link.silent = false;
    const client = createGrpcClient(
      health.HealthClient,
      `127.0.0.1:${linkPort}`,
      [],
      CONNECT_TIMEOUT_MS,
    );
    try {
      for (let i = 0; i < 5; i++) {
        assert.equal(await check(client, 1_000), true);
        await sleep(CONNECT_TIMEOUT_MS / 2);
      }
      assert.equal((client.getChannel() as WatchdogChannel).replaced, 0);
    } finally {
      client.close();
    }
  });
});
