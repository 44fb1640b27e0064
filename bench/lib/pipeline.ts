// Watching the ticket event pipeline from outside (real backends): how many events the stream
// holds, and whether everything created has been relayed, triaged and aggregated.
import type autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import {
  autocannonRun,
  CpuMeter,
  type LoadSettings,
  type ProcessRef,
  type RunResult,
} from './measure.js';

const STREAM = 'TICKETS';
const DURABLES = ['answers-triage', 'digest-aggregator'];

export class PipelineProbe {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly db: mysql.Connection,
  ) {}

  static async connect(natsUrl: string, mysqlUrl: string): Promise<PipelineProbe> {
    const nc = await connect({ servers: natsUrl });
    const db = await mysql.createConnection({ uri: mysqlUrl });
    return new PipelineProbe(nc, await nc.jetstreamManager(), db);
  }

  /** Events of one type in the stream. */
  async count(subject: string): Promise<number> {
    const info = await this.jsm.streams.info(STREAM, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  }

  /**
   * True when nothing is left to do: the outbox is empty, every created ticket has been
   * triaged, and both durable consumers have nothing pending or unacknowledged.
   */
  async idle(): Promise<boolean> {
    const [rows] = await this.db.query<mysql.RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM tickets_outbox WHERE published_at IS NULL',
    );
    if (Number(rows[0]?.n ?? 1) > 0) return false;
    const [created, triaged] = await Promise.all([
      this.count('tickets.created'),
      this.count('tickets.triaged'),
    ]);
    if (triaged < created) return false;
    for (const name of DURABLES) {
      const info = await this.jsm.consumers.info(STREAM, name).catch(() => undefined);
      if (!info || info.num_pending + info.num_ack_pending > 0) return false;
    }
    return true;
  }

  /** Waits (polling every 100 ms) until idle(); the seconds it took. */
  async caughtUp(timeoutMs: number): Promise<number> {
    const started = Date.now();
    while (!(await this.idle().catch(() => false))) {
      if (Date.now() - started > timeoutMs) throw new Error('the pipeline did not catch up');
      await new Promise((r) => setTimeout(r, 100));
    }
    return (Date.now() - started) / 1000;
  }

  /**
   * MariaDB's counts of transactions committed and statements run, server-wide (the probe's
   * own few polls included): per created ticket they show how well the writes are batched.
   */
  async mysqlCounts(): Promise<{ commits: number; statements: number }> {
    const [rows] = await this.db.query<mysql.RowDataPacket[]>(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Questions')",
    );
    const value = (name: string) => Number(rows.find((r) => r.Variable_name === name)?.Value ?? 0);
    return { commits: value('Com_commit'), statements: value('Questions') };
  }

  async close(): Promise<void> {
    await this.db.end();
    await this.nc.close();
  }
}

/** A create run with the whole topology, and what it cost until the pipeline had caught up. */
export interface PipelineRun {
  tickets: number;
  rps: number;
  /** Seconds from the end of the run until nothing was left to relay, triage or aggregate. */
  catchUpSeconds: number;
  /** Every process, from the run's start until the pipeline caught up, per created ticket. */
  cpuMsPerTicket: Record<string, number>;
  totalCpuMs: number;
  /** MariaDB transactions committed and statements run per created ticket, over the same span. */
  mysqlPerTicket: { commits: number; statements: number };
}

/**
 * Creates tickets with `opts` while every consumer runs: a warm-up that is worked off first,
 * then the measured run; CPU is taken from its start until the pipeline has caught up, so it
 * is all the work a created ticket causes, wherever it lands in time.
 */
export async function createThroughPipeline(
  natsUrl: string,
  mysqlUrl: string,
  name: string,
  opts: autocannon.Options,
  load: LoadSettings,
  processes: () => ProcessRef[],
): Promise<{ run: RunResult; pipeline: PipelineRun }> {
  const probe = await PipelineProbe.connect(natsUrl, mysqlUrl);
  try {
    if (load.warmupSeconds > 0) {
      await autocannonRun(
        `${name}: warm-up, then worked off`,
        opts,
        { ...load, seconds: load.warmupSeconds, warmupSeconds: 0 },
        processes,
      );
    }
    await probe.caughtUp(600_000);
    const counted = await probe.mysqlCounts();
    const cpu = new CpuMeter(processes).start();
    const run = await autocannonRun(name, opts, { ...load, warmupSeconds: 0 }, processes);
    const catchUpSeconds = await probe.caughtUp(600_000);
    const counts = await probe.mysqlCounts();
    const perTicket = (n: number) => Math.round((n / Math.max(1, run.requests)) * 100) / 100;
    const mysqlPerTicket = {
      commits: perTicket(counts.commits - counted.commits),
      statements: perTicket(counts.statements - counted.statements),
    };
    const cpuMsPerTicket = cpu.perRequest(run.requests);
    const totalCpuMs = Object.values(cpuMsPerTicket).reduce((a, b) => a + b, 0);
    return {
      run,
      pipeline: {
        tickets: run.requests,
        rps: run.rps,
        catchUpSeconds,
        cpuMsPerTicket,
        totalCpuMs,
        mysqlPerTicket,
      },
    };
  } finally {
    await probe.close();
  }
}

export function describePipeline(p: PipelineRun): string {
  const perProcess = Object.entries(p.cpuMsPerTicket)
    .map(([n, ms]) => `${n} ${ms}`)
    .join(', ');
  return `${p.tickets} tickets at ${p.rps}/s, caught up ${p.catchUpSeconds.toFixed(1)} s after the end; CPU ms per ticket until then: ${perProcess} (${p.totalCpuMs.toFixed(2)} in all); MariaDB per ticket: ${p.mysqlPerTicket.commits} transactions, ${p.mysqlPerTicket.statements} statements`;
}
