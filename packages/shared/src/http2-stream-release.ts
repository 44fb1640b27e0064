/**
 * A finished `node:http2` client stream lets go of its listeners (grpc-js's whole call state:
 * its call layers, metadata, the response message and the caller's callback), so V8's
 * scavenges stop copying and promoting them.
 *
 * Why: a client stream's native handle is released through a weak V8 handle to its JavaScript
 * wrapper, and V8's young-generation collection (a scavenge) treats weak handles to wrappers
 * that JavaScript has modified (Node sets properties on every one) as strong: only a full
 * collection finds them dead. So everything reachable from a finished stream survives every
 * scavenge until it is promoted, and waits in the old generation for the next full collection.
 * grpc-js's listeners on the stream are the way from the stream to the call; with them gone the
 * stream carries only its own state. Measured on the gateway at 300 req/s (bench/tail-path.ts,
 * docs/lab/2026-11-26-gateway-survivors.md): promoted per request
 * 12.0–12.8 → 7.1–7.4 KB (search) and 16.2–16.4 → 7.0–7.5 KB (list), time paused in GC halved.
 *
 * grpc-js opens its sessions with `http2.connect` of the shared `node:http2` module, so the
 * wrapper installed here covers every channel of the process. `close` is a stream's last event;
 * the listeners go one turn of the event loop later, after every `close` listener has run, and
 * a no-op `error` listener stays so that an error emitted after that cannot crash the process.
 */
import http2 from 'node:http2';
import { withLeanAsyncBind } from './http2-request-bind.js';

type Connect = typeof http2.connect;

let installed = false;

/** Installs the release for every http2 session opened from now on (idempotent). */
export function releaseClosedHttp2Streams(): void {
  if (installed) return;
  installed = true;
  const connect: Connect = http2.connect;
  http2.connect = function (this: unknown, ...args: Parameters<Connect>) {
    const session = connect.apply(this, args);
    const request = session.request;
    session.request = function (this: http2.ClientHttp2Session, ...a: Parameters<typeof request>) {
      // The same wrapper also spares each request Node 20's deprecated accessor (see there).
      const stream = withLeanAsyncBind(() => request.apply(this, a));
      stream.once('close', () => setImmediate(releaseListeners, stream));
      return stream;
    };
    return session;
  } as Connect;
}

function releaseListeners(stream: http2.ClientHttp2Stream): void {
  stream.removeAllListeners();
  stream.on('error', ignore);
}

function ignore(): void {}
