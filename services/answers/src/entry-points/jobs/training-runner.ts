// Runs the organizations' training jobs in the background: takes a queued job from the store
// (any replica may; a lease keeps it one replica's), trains it in a child process at the
// lowest CPU priority so the requests this machine serves keep their latency, records progress,
// and ends the job (a new version, activated if asked) or records why it failed. The active
// model is never touched by a failed run.
import { fork, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { setPriority } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Wakeup, type Logger } from '@support-agent/shared';
import type { JobOutcome, TrainingJob, TriageStore } from '../../domain/org-triage/ports.js';
import type { TrainRequest, WorkerMessage } from './training-protocol.js';

export interface TrainingRunnerOptions {
  store: TriageStore;
  logger: Logger;
  now: () => Date;
  /** How often the store is asked for a queued job (a job queued here wakes the runner at once). */
  pollMs: number;
  /** A running job's lease: another replica takes it up this long after its heartbeats stop. */
  leaseMs: number;
  /** A run taking longer is stopped and failed. */
  timeoutMs: number;
  /** Heap limit of the child process, MB. */
  maxMemoryMb: number;
  /** Nice value of the child process (19: only idle CPU). */
  nice: number;
  /** Called after a run activated its model. */
  activated: () => void;
}

/** Heartbeats (progress and lease) at most this often. */
const HEARTBEAT_MS = 1_000;

export class TrainingRunner {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly wakeup = new Wakeup();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private child: ChildProcess | undefined;

  constructor(private readonly o: TrainingRunnerOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Takes up a queued job now rather than at the next poll. */
  poke(): void {
    this.wakeup.wakeAll();
  }

  /** Stops taking jobs; a run in progress is stopped (its lease lapses, so it runs again later). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.child?.kill('SIGKILL');
    this.wakeup.wakeAll();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let job: TrainingJob | undefined;
      try {
        job = await this.o.store.claimJob(this.owner, this.o.leaseMs, this.o.now());
      } catch (err) {
        this.o.logger.warn({ err: (err as Error).message }, 'training jobs: cannot claim');
      }
      if (job) await this.runJob(job);
      else await this.wakeup.sleep(this.o.pollMs);
    }
  }

  private async runJob(job: TrainingJob): Promise<void> {
    const log = this.o.logger.child({ orgId: job.orgId, jobId: job.id });
    const { store, now } = this.o;
    let outcome: JobOutcome;
    try {
      const settings = await store.settings(job.orgId);
      const examples = (await store.examples(job.orgId)).filter((e) =>
        settings.categories.includes(e.label),
      );
      log.info({ examples: examples.length, attempt: job.attempts }, 'training run started');
      const result = await this.train(job, {
        examples: examples.map((e) => ({ text: e.text, label: e.label })),
        categories: settings.categories,
      });
      if (result.kind === 'failed') outcome = result;
      else {
        const report = {
          ...result.report,
          cpuMs: result.cpuMs,
          modelBytes: Buffer.byteLength(result.model),
        };
        outcome = {
          kind: 'succeeded',
          model: result.model,
          categories: (JSON.parse(result.model) as { classes: string[] }).classes,
          report,
        };
      }
    } catch (err) {
      outcome = { kind: 'failed', error: `the run failed: ${(err as Error).message}` };
    }
    if (this.stopped) return; // killed by stop(): the lease lapses and the run starts again later
    try {
      const finished = await store.finishJob(job.id, this.owner, outcome, now());
      if (!finished) log.warn('training run ended after its lease was lost; result discarded');
      else if (finished.state === 'failed')
        log.warn({ error: finished.error }, 'training run failed');
      else {
        log.info(
          {
            version: finished.version,
            macroF1: finished.report?.macroF1,
            activated: finished.activated,
          },
          'training run succeeded',
        );
        if (finished.activated) this.o.activated();
      }
    } catch (err) {
      log.error({ err: (err as Error).message }, 'training run: cannot record its end');
    }
  }

  /** Trains in a child process at low priority; resolves with its result or its failure. */
  private train(
    job: TrainingJob,
    request: TrainRequest,
  ): Promise<Extract<WorkerMessage, { kind: 'done' }> | { kind: 'failed'; error: string }> {
    const { store, now, leaseMs } = this.o;
    return new Promise((resolve) => {
      const child = forkWorker(this.o.maxMemoryMb);
      this.child = child;
      try {
        if (child.pid !== undefined) setPriority(child.pid, this.o.nice);
      } catch {
        // Not allowed to lower it (some sandboxes): the run still works, at normal priority.
      }
      let settled = false;
      let lastBeat = 0;
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      const finish = (result: Parameters<typeof resolve>[0]) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(beat);
        this.child = undefined;
        child.kill('SIGKILL');
        resolve(result);
      };
      let phase = 'starting';
      let fraction = 0;
      const heartbeat = () => {
        lastBeat = Date.now();
        void store
          .heartbeat(job.id, this.owner, phase, fraction, leaseMs, now())
          .then((mine) => {
            if (!mine) finish({ kind: 'failed', error: 'the run lost its lease' });
          })
          .catch(() => undefined);
      };
      const beat = setInterval(heartbeat, Math.min(HEARTBEAT_MS * 5, leaseMs / 3));
      const timer = setTimeout(
        () => finish({ kind: 'failed', error: `the run took longer than ${this.o.timeoutMs} ms` }),
        this.o.timeoutMs,
      );
      child.on('message', (m: WorkerMessage) => {
        if (m.kind === 'progress') {
          phase = m.phase;
          fraction = m.fraction;
          if (Date.now() - lastBeat >= HEARTBEAT_MS) heartbeat();
        } else finish(m);
      });
      child.on('error', (err) =>
        finish({ kind: 'failed', error: `the training process failed: ${err.message}` }),
      );
      child.on('exit', (code, signal) =>
        finish({
          kind: 'failed',
          error: `the training process ended (${signal ?? `exit code ${code}`}) before reporting${
            /heap out of memory/i.test(stderr) ? ': out of memory' : ''
          }`,
        }),
      );
      child.send(request);
    });
  }
}

/** The worker runs from dist/ (node) or, in tests and tsx scripts, from src/ through tsx. */
function forkWorker(maxMemoryMb: number): ChildProcess {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`../../training-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  return fork(entry, [], {
    execArgv: [...(fromSource ? ['--import', 'tsx'] : []), `--max-old-space-size=${maxMemoryMb}`],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
  });
}
