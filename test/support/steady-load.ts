// Steady load of the five agent operations for the fault-injection suite: a few workers on
// loopback, each with one request in flight, every request with a client deadline. Each ending
// is classified against the contract under faults:
//
//   success                the operation's success status with a JSON body
//   unavailable            503 {"error":{"code":"service_unavailable"}} with Retry-After
//   deflection limited     429 deflection_limit_reached (answers only) with Retry-After
//   refused by a killed gateway   connection refused / dropped by a gateway that was killed
//                          (down, or killed while the request was in flight): retried on the
//                          other replica, so the request is not lost
//   violation              anything else: a hang past the deadline, a dropped connection from
//                          a live gateway, HTML, a 5xx other than 503, a 503 without Retry-After
//
// Ticket creations carry an Idempotency-Key and are retried with the same key until they get
// a 201, so every key ends with exactly one ticket; the key → ticket id map is kept for the
// database checks.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { httpRequest, type HttpResponse, type Outcome } from './http-raw.js';

export type Op = 'search' | 'faq' | 'list' | 'create' | 'answer';
export const OPS: readonly Op[] = ['search', 'faq', 'list', 'create', 'answer'];

/** What the load needs to know about the gateway replicas. */
export interface GatewayView {
  count: number;
  url(i: number): string;
  /** The replica is known to be down (killed, not yet restarted). */
  isDown(i: number): boolean;
  /** Incremented whenever the replica is killed. */
  epoch(i: number): number;
}

export interface Violation {
  op: Op;
  phase: string;
  atMs: number;
  detail: string;
}

export interface PhaseStats {
  sent: number;
  success: number;
  /** Successes (and documented 429s) answered within FAST_MS of being sent: availability. */
  fastSuccess: number;
  unavailable: number;
  refused: number;
  /** Per operation: requests sent, and those answered with a success within FAST_MS. */
  byOp: Partial<Record<Op, { sent: number; fast: number }>>;
}

/** A success slower than this does not count as available (availability()). */
export const FAST_MS = 1_000;

/** Share of `op`'s requests in phase `s` answered with a success within FAST_MS. */
export function availability(s: PhaseStats | undefined, op: Op): number | undefined {
  const o = s?.byOp[op];
  return o && o.sent > 0 ? o.fast / o.sent : undefined;
}

export interface SteadyLoadOptions {
  gateways: GatewayView;
  key: string;
  workers: number;
  /** Client deadline of every request: the gateway's gRPC deadline plus a margin. */
  timeoutMs: number;
  /** Pause between a worker's operations. */
  paceMs: number;
  /** Search queries and questions; the answers should be covered by the KB. */
  questions: readonly string[];
  /** The operations the workers cycle through (default: all five). */
  ops?: readonly Op[];
  /**
   * Worker w keeps to operation ops[w % ops.length], so a fault that holds up one operation
   * (a creation retrying its key) does not starve the others of workers.
   */
  pinned?: boolean;
  /** How long a creation keeps retrying its key after stop() before it counts as lost. */
  createRetryMs?: number;
}

type Result = 'success' | 'unavailable' | 'limited' | 'violation' | 'lost';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SteadyLoad {
  /** HTTP requests sent, retries included. */
  sent = 0;
  /** Operations (a creation with all its retries counts once). */
  operations = 0;
  success = 0;
  unavailable = 0;
  deflectionLimited = 0;
  refusedByKilledGateway = 0;
  /** Operations that never got an answer (every attempt refused, or a creation never got 201). */
  lost = 0;
  /** An idempotency key answered with two different ticket ids. */
  duplicates = 0;
  /** 200 answers with high_confidence: true. */
  highConfidence = 0;
  readonly violations: Violation[] = [];
  /** Idempotency key → ticket id of its 201. */
  readonly creates = new Map<string, number>();
  readonly phases = new Map<string, PhaseStats>();
  phase = 'warm-up';
  /** When (Date.now()) the last request ended with neither a success nor a documented 429. */
  lastFailureAt = 0;

  private running = false;
  private workers: Promise<void>[] = [];
  private readonly started = Date.now();
  private readonly agents: http.Agent[][];
  private rr = 0;

  constructor(private readonly o: SteadyLoadOptions) {
    this.agents = Array.from({ length: o.workers + 1 }, () =>
      Array.from(
        { length: o.gateways.count },
        () => new http.Agent({ keepAlive: true, maxSockets: 2 }),
      ),
    );
  }

  start(): void {
    this.running = true;
    this.workers = Array.from({ length: this.o.workers }, (_, w) => this.worker(w));
  }

  /** Stops the workers; creations in progress keep retrying their key (bounded). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    for (const perWorker of this.agents) for (const a of perWorker) a.destroy();
  }

  /**
   * Repeats one operation (creations keep their key) through the given replica until it
   * succeeds; resolves with the milliseconds that took, or rejects after timeoutMs.
   */
  async probe(op: Op, timeoutMs: number, gateway?: number): Promise<number> {
    const t0 = Date.now();
    const key = this.newKey('probe');
    for (;;) {
      const r = await this.attempt(op, this.o.workers, key, gateway);
      if (r === 'success' || r === 'limited') return Date.now() - t0;
      if (Date.now() - t0 > timeoutMs) {
        throw new Error(`${op} did not succeed within ${timeoutMs} ms (phase ${this.phase})`);
      }
      await sleep(100);
    }
  }

  summary(): string {
    return (
      `requests sent ${this.sent}, operations ${this.operations}, success ${this.success}, ` +
      `503 ${this.unavailable}, deflection-limited ${this.deflectionLimited}, ` +
      `refused by killed gateway ${this.refusedByKilledGateway}, lost ${this.lost}, ` +
      `duplicates ${this.duplicates}, violations ${this.violations.length}`
    );
  }

  private async worker(w: number): Promise<void> {
    let n = 0;
    while (this.running) {
      const ops = this.o.ops ?? OPS;
      const op = ops[(this.o.pinned ? w : w + n++) % ops.length]!;
      if (op === 'create') await this.create(w);
      else {
        this.operations++;
        const r = await this.attempt(op, w);
        if (r === 'lost') this.lost++;
      }
      await sleep(this.o.paceMs);
    }
  }

  private newKey(prefix: string): string {
    return `${prefix}-${randomBytes(9).toString('base64url')}`;
  }

  /** One creation: the same Idempotency-Key until a 201 (or the retry budget after stop()). */
  private async create(w: number): Promise<void> {
    this.operations++;
    const key = this.newKey(`w${w}`);
    let stoppedAt: number | undefined;
    for (;;) {
      const r = await this.attempt('create', w, key);
      if (r === 'success') return;
      if (!this.running) stoppedAt ??= Date.now();
      if (stoppedAt !== undefined && Date.now() - stoppedAt > (this.o.createRetryMs ?? 30_000)) {
        this.lost++;
        this.violation('create', `idempotency key ${key} never got a 201`);
        return;
      }
      await sleep(150);
    }
  }

  private request(
    op: Op,
    key: string | undefined,
  ): { method: string; path: string; body?: string } {
    const q = this.o.questions[Math.floor(Math.random() * this.o.questions.length)]!;
    const prefix = Math.random() < 0.5 ? '/api/v1/agent' : '/api/agent';
    switch (op) {
      case 'search':
        return {
          method: 'GET',
          path: `${prefix}/kb/search?query=${encodeURIComponent(q)}&limit=3`,
        };
      case 'faq':
        return { method: 'GET', path: `${prefix}/faq` };
      case 'list':
        return { method: 'GET', path: `${prefix}/tickets?limit=5` };
      case 'create':
        return {
          method: 'POST',
          path: `${prefix}/tickets`,
          body: JSON.stringify({ content: `${q} (ticket ${key})`, idempotencyKey: key }),
        };
      case 'answer':
        return { method: 'POST', path: `${prefix}/answers`, body: JSON.stringify({ question: q }) };
    }
  }

  /**
   * Sends one operation, failing over to the other replica when the chosen one was killed.
   * `agentSlot` selects the keep-alive agents (one set per worker, one for probes).
   */
  private async attempt(op: Op, agentSlot: number, key?: string, only?: number): Promise<Result> {
    const view = this.o.gateways;
    let gw = only ?? this.rr++ % view.count;
    const req = this.request(op, key);
    for (let tries = 0; tries < 2 * view.count + 2; tries++) {
      const epoch = view.epoch(gw);
      const wasDown = view.isDown(gw);
      const stats = this.phaseStats();
      this.sent++;
      stats.sent++;
      const perOp = (stats.byOp[op] ??= { sent: 0, fast: 0 });
      perOp.sent++;
      const sentAt = Date.now();
      const outcome = await httpRequest(view.url(gw), req.method, req.path, {
        headers: {
          authorization: `Bearer ${this.o.key}`,
          accept: 'application/json',
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(key ? { 'idempotency-key': key } : {}),
        },
        ...(req.body === undefined ? {} : { body: req.body }),
        timeoutMs: this.o.timeoutMs,
        agent: this.agents[agentSlot]![gw]!,
      });
      if (outcome.kind === 'response') {
        const result = this.classify(op, outcome, key);
        const ok = result === 'success' || result === 'limited';
        if (ok && Date.now() - sentAt <= FAST_MS) {
          stats.fastSuccess++;
          perOp.fast++;
        }
        if (!ok) this.lastFailureAt = Date.now();
        return result;
      }
      const killed = wasDown || view.isDown(gw) || view.epoch(gw) !== epoch;
      if (killed && (outcome.kind === 'refused' || outcome.kind === 'dropped')) {
        this.refusedByKilledGateway++;
        stats.refused++;
        if (only === undefined) gw = (gw + 1) % view.count;
        else await sleep(100);
        continue;
      }
      this.lastFailureAt = Date.now();
      this.violation(op, describe(outcome, view.url(gw), req.path));
      return 'violation';
    }
    return 'lost';
  }

  private classify(op: Op, res: HttpResponse, key: string | undefined): Result {
    const type = String(res.headers['content-type'] ?? '');
    const stats = this.phaseStats();
    if (!/^application\/json/.test(type) || res.json === undefined) {
      this.violation(op, `${res.status} not JSON (${type}): ${res.text.slice(0, 200)}`);
      return 'violation';
    }
    const expected = op === 'create' ? 201 : 200;
    if (res.status === expected) {
      const problem = checkBody(op, res.json);
      if (problem) {
        this.violation(op, `${res.status} ${problem}: ${res.text.slice(0, 200)}`);
        return 'violation';
      }
      this.success++;
      stats.success++;
      if (op === 'answer' && res.json.high_confidence === true) this.highConfidence++;
      if (op === 'create') {
        const id = res.json.ticket_id as number;
        const before = this.creates.get(key!);
        if (before !== undefined && before !== id) this.duplicates++;
        this.creates.set(key!, id);
      }
      return 'success';
    }
    const code = res.json?.error?.code;
    const retryAfter = Number(res.headers['retry-after']);
    if (res.status === 503 && code === 'service_unavailable' && retryAfter >= 1) {
      this.unavailable++;
      stats.unavailable++;
      return 'unavailable';
    }
    if (op === 'answer' && res.status === 429 && code === 'deflection_limit_reached') {
      if (!(retryAfter >= 1)) {
        this.violation(op, '429 deflection_limit_reached without Retry-After');
        return 'violation';
      }
      this.deflectionLimited++;
      stats.success++;
      return 'limited';
    }
    this.violation(op, `unexpected ${res.status}: ${res.text.slice(0, 300)}`);
    return 'violation';
  }

  private phaseStats(): PhaseStats {
    let s = this.phases.get(this.phase);
    if (!s)
      this.phases.set(
        this.phase,
        (s = { sent: 0, success: 0, fastSuccess: 0, unavailable: 0, refused: 0, byOp: {} }),
      );
    return s;
  }

  private violation(op: Op, detail: string): void {
    this.violations.push({ op, phase: this.phase, atMs: Date.now() - this.started, detail });
  }
}

function describe(o: Exclude<Outcome, HttpResponse>, base: string, path: string): string {
  const where = `${base}${path}`;
  switch (o.kind) {
    case 'timeout':
      return `no response within ${o.ms} ms (${where})`;
    case 'refused':
      return `connection refused by a live gateway (${where})`;
    case 'dropped':
      return `connection dropped without a response after ${o.ms} ms: ${o.code} ${o.message} (${where})`;
  }
}

/** A minimal shape check of each success body. */
function checkBody(op: Op, b: any): string | undefined {
  switch (op) {
    case 'search':
      return Array.isArray(b.results) ? undefined : 'no results array';
    case 'faq':
      return typeof b.message === 'string' ? undefined : 'no message';
    case 'list':
      return Array.isArray(b.tickets) && 'next_cursor' in b ? undefined : 'not a ticket page';
    case 'create':
      return Number.isInteger(b.ticket_id) && typeof b.duplicate === 'boolean'
        ? undefined
        : 'not a creation result';
    case 'answer':
      return typeof b.answer === 'string' && Number.isInteger(b.confidence)
        ? undefined
        : 'not an answer';
  }
}
