// Low-level HTTP clients for the reliability and security suites, where `fetch` hides too much:
// - httpRequest(): node:http with an overall deadline, telling apart a response, a refused
//   connection, a connection dropped without a response, and a hang;
// - rawExchange(): arbitrary bytes over a TCP socket (invalid UTF-8 in the request line, NUL
//   bytes in headers, bodies trickled byte by byte), reading whatever comes back until the
//   server closes the connection or the deadline passes.
import http from 'node:http';
import net from 'node:net';

export interface HttpResponse {
  kind: 'response';
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
  ms: number;
}

/** Nothing listens on the port (a killed process). */
export interface Refused {
  kind: 'refused';
  code: string;
  ms: number;
}

/** The connection broke before a complete response arrived (reset, premature close). */
export interface Dropped {
  kind: 'dropped';
  code: string;
  message: string;
  ms: number;
}

/** No complete response within the deadline. */
export interface TimedOut {
  kind: 'timeout';
  ms: number;
}

export type Outcome = HttpResponse | Refused | Dropped | TimedOut;

export interface HttpRequestOptions {
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  timeoutMs?: number;
  agent?: http.Agent | false;
}

/** One request; never throws: every ending is an Outcome. */
export function httpRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: HttpRequestOptions = {},
): Promise<Outcome> {
  const started = Date.now();
  const url = new URL(baseUrl);
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const headers: Record<string, string | string[]> = { ...options.headers };
    if (options.body !== undefined)
      headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method,
      path,
      headers,
      agent: options.agent ?? undefined,
    });
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', ms: Date.now() - started });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      const ms = Date.now() - started;
      if (err.code === 'ECONNREFUSED') finish({ kind: 'refused', code: err.code, ms });
      else finish({ kind: 'dropped', code: err.code ?? 'unknown', message: err.message, ms });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err: NodeJS.ErrnoException) =>
        finish({
          kind: 'dropped',
          code: err.code ?? 'unknown',
          message: err.message,
          ms: Date.now() - started,
        }),
      );
      res.on('aborted', () =>
        finish({
          kind: 'dropped',
          code: 'aborted',
          message: 'response aborted',
          ms: Date.now() - started,
        }),
      );
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        finish({
          kind: 'response',
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json,
          ms: Date.now() - started,
        });
      });
    });
    req.end(options.body);
  });
}

/** A step of a raw exchange: bytes to write, or a pause. */
export type RawStep = string | Buffer | { pauseMs: number };

export interface RawResult {
  /** Everything the server sent. */
  bytes: Buffer;
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** The deadline passed with the connection still open. */
  timedOut: boolean;
  /** Writing failed because the server had already closed the connection. */
  writeFailed: boolean;
  ms: number;
  /** The first response in `bytes`, if one is complete. */
  response: ParsedResponse | undefined;
}

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: any;
}

/**
 * Writes the steps to a fresh connection and collects the reply until the server closes the
 * connection, `untilResponse` is set and one complete response arrived, or timeoutMs passes.
 */
export function rawExchange(
  port: number,
  steps: RawStep[],
  options: { timeoutMs?: number; untilResponse?: boolean; host?: string; head?: boolean } = {},
): Promise<RawResult> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let writeFailed = false;
    const socket = net.connect({ host: options.host ?? '127.0.0.1', port });
    const finish = (closed: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const bytes = Buffer.concat(chunks);
      resolve({
        bytes,
        closed,
        timedOut,
        writeFailed,
        ms: Date.now() - started,
        response: parseResponse(bytes, options.head),
      });
    };
    const timer = setTimeout(() => finish(false, true), timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (options.untilResponse && parseResponse(Buffer.concat(chunks), options.head)) {
        finish(false, false);
      }
    });
    socket.on('error', () => finish(true, false));
    socket.on('close', () => finish(true, false));
    socket.on('connect', () => {
      void (async () => {
        for (const step of steps) {
          if (settled) return;
          if (typeof step === 'object' && !Buffer.isBuffer(step)) {
            await new Promise((r) => setTimeout(r, step.pauseMs));
            continue;
          }
          if (socket.destroyed || !socket.writable) {
            writeFailed = true;
            return;
          }
          await new Promise<void>((r) =>
            socket.write(step, (err) => {
              if (err) writeFailed = true;
              r();
            }),
          );
        }
      })();
    });
  });
}

/**
 * Parses the first HTTP/1.1 response in `bytes` (Content-Length or chunked; no body when it
 * answers a HEAD); undefined if incomplete.
 */
export function parseResponse(bytes: Buffer, isHead = false): ParsedResponse | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let rest = bytes.subarray(headEnd + 4);
  let body: Buffer;
  if (isHead) {
    body = Buffer.alloc(0);
  } else if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (rest.length < n) return undefined;
    body = rest.subarray(0, n);
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = rest.indexOf('\r\n');
      if (eol < 0) return undefined;
      const size = Number.parseInt(rest.subarray(0, eol).toString('latin1'), 16);
      if (Number.isNaN(size)) return undefined;
      if (size === 0) break;
      if (rest.length < eol + 2 + size + 2) return undefined;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      rest = rest.subarray(eol + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else {
    body = rest; // until close
  }
  const text = body.toString('utf8');
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: Number(m[1]), headers, body: text, json };
}
