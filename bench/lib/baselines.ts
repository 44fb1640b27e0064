// Baselines of the benchmark harness: a bare Node `http` server answering a fixed JSON body
// (the ceiling of one Node process on this machine) and direct gRPC clients of the services,
// bypassing the gateway.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { digest, knowledge, tickets } from '@support-agent/proto';
import { callUnary, createGrpcClient } from '@support-agent/shared';

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

export class BareServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts a server answering every request with `body` (application/json). */
  static async start(body: string): Promise<BareServer> {
    const child = spawn(process.execPath, ['-e', BARE_SERVER], {
      env: { PATH: process.env.PATH ?? '', BARE_BODY_B64: Buffer.from(body).toString('base64') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (line) => resolve(Number(line)));
      child.once('exit', (code) => reject(new Error(`bare server exited (${code})`)));
    });
    return new BareServer(child, `http://127.0.0.1:${port}`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
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
