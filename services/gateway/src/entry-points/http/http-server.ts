import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

const MAX_HEADER_BYTES = 64 * 1024;

export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
}

/** Listens on host:port (0 picks a free port) with the gateway's limits on slow or odd clients. */
export async function listen(
  app: Express,
  port: number,
  host: string,
  timeouts: HttpTimeouts,
): Promise<http.Server> {
  // 64 KiB of headers: a 2000-code-point query in the URL can take 24 KB percent-encoded.
  const server = http.createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      // Node checks the two timeouts below only every connectionsCheckingInterval (30 s by
      // default), which let a slow client hold a socket up to twice as long as configured.
      connectionsCheckingInterval: 1_000,
      // Node answers a missing Host with a bare 400; requestLifecycle answers it in JSON.
      requireHostHeader: false,
      ...bornAsExpressObjects(app),
    },
    app,
  );
  server.on('clientError', answerClientError);
  // CONNECT is no route of ours; without a listener Node would drop the socket unanswered.
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) =>
    answerRaw(socket, 405, 'Method Not Allowed', 'method_not_allowed', 'CONNECT is not supported'),
  );
  // Slow clients cannot hold a socket forever: headers and the whole request within these
  // (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS), else 408; keep-alive outlives typical
  // LB idle timeouts.
  server.requestTimeout = timeouts.requestMs;
  server.headersTimeout = Math.min(timeouts.headersMs, timeouts.requestMs);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Request and response classes whose instances are born with the app's own prototypes
 * (express's request and response methods). Express gives every request and response those
 * prototypes as it receives them (Object.setPrototypeOf), which changes their hidden class in
 * the middle of the request, so code that saw them before and after meets two shapes; objects
 * born with them make that call a no-op.
 */
function bornAsExpressObjects(app: Express): {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
} {
  class ExpressRequest extends http.IncomingMessage {}
  class ExpressResponse extends http.ServerResponse {}
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  app.request = ExpressRequest.prototype as typeof app.request;
  app.response = ExpressResponse.prototype as typeof app.response;
  return {
    IncomingMessage: ExpressRequest,
    ServerResponse: ExpressResponse as typeof http.ServerResponse,
  };
}

/**
 * Requests Node rejects before express sees them (unparseable, headers too large) still get
 * the JSON error body rather than an empty response.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          'request headers (including the URL) exceed 64 KiB',
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request not received in time']
        : [400, 'Bad Request', 'malformed HTTP request'];
  answerRaw(socket, status, reason, 'invalid_request', message);
}

/** Writes a complete JSON error response straight to the socket and closes it. */
function answerRaw(
  socket: Duplex,
  status: number,
  reason: string,
  code: string,
  message: string,
): void {
  const body = JSON.stringify({ error: { message, code } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The port the server is bound to (the real one when it asked for port 0). */
export function boundPort(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}

/**
 * Stops accepting connections and waits for in-flight requests; idle keep-alive sockets are
 * closed as they become idle, and whatever is still open after graceMs is cut.
 */
export function closeServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idleSweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
