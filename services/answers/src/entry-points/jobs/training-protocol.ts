// The messages between the training runner and its child process (IPC).
import type { LabelledText, TrainingReport } from '../../domain/org-triage/train-org-model.js';

export interface TrainRequest {
  examples: LabelledText[];
  categories: string[];
}

export type WorkerMessage =
  | { kind: 'progress'; phase: string; fraction: number }
  | { kind: 'done'; model: string; report: TrainingReport; cpuMs: number }
  | { kind: 'failed'; error: string };
