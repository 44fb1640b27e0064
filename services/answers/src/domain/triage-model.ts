import raw from './triage-model.json' with { type: 'json' };
import { checkModel, type TriageModel } from './classifier.js';

/** The shipped built-in classifier (trained by training/train.ts). */
export function loadTriageModel(): TriageModel {
  return checkModel(raw as unknown);
}
