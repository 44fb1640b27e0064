import { trainOrgModel } from '../../domain/org-triage/train-org-model.js';
import { loadTriageModel } from '../../domain/triage-model.js';
import type { TrainRequest, WorkerMessage } from './training-protocol.js';

/** Progress is sent at most this often. */
const PROGRESS_EVERY_MS = 500;

const send = (message: WorkerMessage) =>
  new Promise<void>((resolve) => process.send!(message, undefined, undefined, () => resolve()));

/** Waits for one TrainRequest, trains, reports, exits. */
export function runTrainingWorker(): void {
  if (!process.send) throw new Error('the training worker runs as a child process with IPC');
  process.once('message', (request: TrainRequest) => {
    void train(request).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

async function train(request: TrainRequest): Promise<void> {
  const started = process.cpuUsage();
  let last = 0;
  try {
    const { model, report } = trainOrgModel(
      request.examples,
      request.categories,
      loadTriageModel(),
      {},
      (phase, fraction) => {
        const now = Date.now();
        if (now - last < PROGRESS_EVERY_MS) return;
        last = now;
        process.send!({ kind: 'progress', phase, fraction } satisfies WorkerMessage);
      },
    );
    const used = process.cpuUsage(started);
    await send({
      kind: 'done',
      model: JSON.stringify(model),
      report,
      cpuMs: Math.round((used.user + used.system) / 1000),
    });
  } catch (err) {
    await send({ kind: 'failed', error: err instanceof Error ? err.message : String(err) });
  }
}
