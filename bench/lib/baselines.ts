// Baselines of the benchmark harness: a bare Node `http` server answering a fixed JSON body
// (the ceiling of one Node process on this machine), the same server with one gRPC hop and no
// work behind it (the ceiling of any HTTP front → gRPC service design here), and direct gRPC
// clients of the services, bypassing the gateway.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { digest, knowledge, tickets } from '@support-agent/proto';
import { callUnary, createGrpcClient } from '@support-agent/shared';
import type { ProcessRef } from './measure.js';

/** The bare server, in its own process like every service (so it gets a core of its own). */
const BARE_SERVER = `
const http = require('node:http');
const body = Buffer.from(process.env.BARE_BODY_B64, 'base64');
const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/**
 * One gRPC hop with no work: an upstream grpc-js server answering every unary call with the
 * body's bytes (no protobuf, no handler logic), and an HTTP front like the bare server that
 * makes one call per request on one channel, the way the services make theirs (see HOP_FRONT),
 * and answers with what came back. No auth, rate
 * limit, validation, logging or metrics: whatever the gateway and a service do can only be
 * slower, so its throughput over the bare server's bounds the ratio any implementation of the
 * design (gateway → gRPC → service) reaches on this machine.
 */
const HOP_METHOD = `
const grpc = require(process.env.GRPC_JS);
const same = (b) => b;
const hop = {
  call: { path: '/bench.Hop/Call', requestStream: false, responseStream: false,
          requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same },
};
`;

const HOP_UPSTREAM = `${HOP_METHOD}
const body = Buffer.from(process.env.BARE_BODY_B64, 'base64');
const server = new grpc.Server();
server.addService(hop, { call: (call, callback) => callback(null, body) });
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  console.log(port);
});
process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
`;

const HOP_FRONT = `${HOP_METHOD}
const http = require('node:http');
const Client = grpc.makeGenericClientConstructor(hop);
const client = new Client('127.0.0.1:' + process.env.HOP_UPSTREAM_PORT, grpc.credentials.createInsecure());
const ask = Buffer.from('q');
// The call is made as the services make theirs (packages/shared): without the caller's stack
// (grpc.ts callUnary), its http2 request bound without Node 20's deprecated accessor and its
// stream released when finished (http2-stream-release.ts). BENCH_PLAIN_CEILING=1: grpc-js as
// it comes, as the ceiling was measured before 2026-11-27.
const lean = process.env.SHARED_URL !== undefined;
const call = (a, cb) => {
  const limit = Error.stackTraceLimit;
  if (lean) Error.stackTraceLimit = 0;
  try {
    client.call(a, cb);
  } finally {
    Error.stackTraceLimit = limit;
  }
};
const server = http.createServer((req, res) => {
  req.resume();
  call(ask, (err, body) => {
    if (err) { res.writeHead(502); res.end(); return; }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 65000;
const listen = () => server.listen(0, '127.0.0.1', () => console.log(server.address().port));
if (lean) import(process.env.SHARED_URL).then((shared) => (shared.releaseClosedHttp2Streams(), listen()));
else listen();
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/**
 * A Node script in a process of its own that prints its port on a line of its own (0 when it
 * listens on none). `nodeArgs` go before the script; `onLine` sees every line it prints.
 */
export class ScriptProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(
    script: string,
    env: Record<string, string>,
    options: { nodeArgs?: string[]; onLine?: (line: string) => void } = {},
  ): Promise<ScriptProcess> {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '-e', script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        if (/^\d+$/.test(line)) resolve(Number(line));
        options.onLine?.(line);
      });
      child.once('exit', (code) => reject(new Error(`baseline process exited (${code})`)));
    });
    return new ScriptProcess(child, port);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}

export class BareServer {
  private constructor(private readonly server: ScriptProcess) {}

  /** Its process, for the CPU and RSS meters. */
  processRefs(): ProcessRef[] {
    return [{ name: 'bare-node', pid: this.server.child.pid }];
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Starts a server answering every request with `body` (application/json). */
  static async start(body: string): Promise<BareServer> {
    return new BareServer(
      await ScriptProcess.start(BARE_SERVER, {
        BARE_BODY_B64: Buffer.from(body).toString('base64'),
      }),
    );
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}

/** The bare server with one gRPC hop to an upstream that does nothing (HOP_FRONT above). */
export class GrpcHopServer {
  private constructor(
    private readonly front: ScriptProcess,
    private readonly upstream: ScriptProcess,
  ) {}

  /** The front and the upstream, for the CPU and RSS meters. */
  processRefs(): ProcessRef[] {
    return [
      { name: 'hop-front', pid: this.front.child.pid },
      { name: 'hop-upstream', pid: this.upstream.child.pid },
    ];
  }

  get url(): string {
    return `http://127.0.0.1:${this.front.port}`;
  }

  static async start(body: string): Promise<GrpcHopServer> {
    const GRPC_JS = createRequire(import.meta.url).resolve('@grpc/grpc-js');
    const BARE_BODY_B64 = Buffer.from(body).toString('base64');
    const upstream = await ScriptProcess.start(HOP_UPSTREAM, { GRPC_JS, BARE_BODY_B64 });
    try {
      const front = await ScriptProcess.start(HOP_FRONT, {
        GRPC_JS,
        HOP_UPSTREAM_PORT: String(upstream.port),
        ...(process.env.BENCH_PLAIN_CEILING === '1'
          ? {}
          : { SHARED_URL: import.meta.resolve('@support-agent/shared') }),
      });
      return new GrpcHopServer(front, upstream);
    } catch (err) {
      await upstream.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    await this.front.stop();
    await this.upstream.stop();
  }
}

/** The generated clients, one channel each (created once, like the gateway's). */
export class DirectGrpc {
  readonly knowledge: knowledge.KnowledgeServiceClient;
  readonly tickets: tickets.TicketsServiceClient;
  readonly digest: digest.DigestServiceClient;

  constructor(addresses: { knowledge: string; tickets: string; digest: string }) {
    this.knowledge = createGrpcClient(knowledge.KnowledgeServiceClient, addresses.knowledge);
    this.tickets = createGrpcClient(tickets.TicketsServiceClient, addresses.tickets);
    this.digest = createGrpcClient(digest.DigestServiceClient, addresses.digest);
  }

  search(orgId: string, query: string, limit = 5): Promise<knowledge.SearchResponse> {
    return callUnary(
      this.knowledge.search.bind(this.knowledge),
      { orgId, query, limit },
      {
        timeoutMs: 5_000,
      },
    );
  }

  listTickets(orgId: string, limit = 20, cursor?: string): Promise<tickets.ListTicketsResponse> {
    return callUnary(
      this.tickets.listTickets.bind(this.tickets),
      { orgId, limit, ...(cursor ? { cursor } : {}) },
      { timeoutMs: 5_000 },
    );
  }

  buildDigest(orgId: string, weekStart: string): Promise<digest.BuildDigestResponse> {
    return callUnary(
      this.digest.buildDigest.bind(this.digest),
      { orgId, weekStart },
      { timeoutMs: 300_000 },
    );
  }

  close(): void {
    this.knowledge.close();
    this.tickets.close();
    this.digest.close();
  }
}
