// A finished gRPC call's http2 stream lets go of grpc-js's listeners (http2-stream-release.ts),
// against a real gRPC server and grpc-js client.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import {
  checkHealth,
  createLogger,
  releaseClosedHttp2Streams,
  serveGrpc,
} from '@support-agent/shared';

const logger = createLogger('shared-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** Records every client stream of sessions opened from now on (outside the release). */
function recordStreams(): { streams: http2.ClientHttp2Stream[]; stop(): void } {
  const streams: http2.ClientHttp2Stream[] = [];
  const connect = http2.connect;
  http2.connect = function (this: unknown, ...args: Parameters<typeof connect>) {
    const session = connect.apply(this, args);
    const request = session.request;
    session.request = (...a: Parameters<typeof request>) => {
      const stream = request.apply(session, a);
      streams.push(stream);
      return stream;
    };
    return session;
  } as typeof connect;
  return { streams, stop: () => void (http2.connect = connect) };
}

describe('http2 stream release', () => {
  it('when a gRPC call has finished, then its http2 stream keeps no listener but a no-op error one', async () => {
    releaseClosedHttp2Streams();
    const recorder = recordStreams();
    const grpc = await serveGrpc('probe', { host: '127.0.0.1', port: 0 }, logger);
    try {
      assert.equal(await checkHealth(`127.0.0.1:${grpc.port}`), true);
      const [stream] = recorder.streams;
      assert.ok(stream, 'the call went over a recorded http2 stream');
      for (let i = 0; i < 100 && !stream.closed; i++) await sleep(10);
      await nextTurn();
      assert.deepEqual(stream.eventNames(), ['error']);
      assert.equal(stream.listenerCount('error'), 1);
      // An error emitted after the release is absorbed instead of crashing the process.
      stream.emit('error', new Error('late'));
    } finally {
      recorder.stop();
      await grpc.stop(0);
    }
  });

  it('when installed twice, then a stream gets one release listener', async () => {
    releaseClosedHttp2Streams();
    releaseClosedHttp2Streams();
    const server = http2.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    try {
      const stream = session.request({ ':path': '/' });
      assert.equal(stream.listenerCount('close'), 1);
      stream.resume();
      await new Promise((resolve) => stream.once('close', resolve));
      await nextTurn();
      assert.deepEqual(stream.eventNames(), ['error']);
    } finally {
      session.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
