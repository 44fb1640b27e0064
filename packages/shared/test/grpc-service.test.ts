// The start()/stop() composition every gRPC service shares, against a real gRPC server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkHealth,
  createLogger,
  gracefulStop,
  openWithClosers,
  serveGrpc,
} from '@support-agent/shared';

const logger = createLogger('shared-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const LOOPBACK = { host: '127.0.0.1', port: 0 };

describe('gRPC service composition', () => {
  it('when start-up fails half-way, then what it opened is closed newest first and the error is rethrown', async () => {
    const closed: string[] = [];
    await assert.rejects(
      openWithClosers(logger, async (closers) => {
        closers.push(() => void closed.push('store'));
        closers.push(() => void closed.push('client'));
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepEqual(closed, ['client', 'store']);
  });

  it('when stopped, then health fails before the drain, the server stops, and the closers run last, once', async () => {
    const steps: string[] = [];
    const handle = await openWithClosers(logger, async (closers) => {
      closers.push(() => void steps.push('closers'));
      const grpc = await serveGrpc('probe', LOOPBACK, logger);
      const address = `127.0.0.1:${grpc.port}`;
      assert.equal(await checkHealth(address), true);
      const drain = async () => {
        steps.push(`drain (serving: ${await checkHealth(address)})`);
      };
      return { grpc, address, stop: gracefulStop('probe', grpc, 1_000, closers, drain) };
    });
    await Promise.all([handle.stop(), handle.stop()]);
    await handle.grpc.stop(0);
    assert.deepEqual(steps, ['drain (serving: false)', 'closers']);
    assert.equal(await checkHealth(handle.address, '', 300), false);
  });
});
