// The child process of one training run (entry-points/jobs/training-runner.ts forks it at low
// priority): receives the examples over IPC, trains, sends progress and the result, exits. A
// crash or an out-of-memory here ends this process only; the run is then recorded as failed.
import { runTrainingWorker } from './entry-points/jobs/training-worker-main.js';

runTrainingWorker();
