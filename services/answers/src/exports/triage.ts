// `@support-agent/answers/triage`: the built-in triage classifier and its shipped model, for
// tools that run it in process (scripts/eval-triage.ts). The service itself never imports
// this file.
export { classify, type Classification, type TriageModel } from '../domain/classifier.js';
export { loadTriageModel } from '../domain/triage-model.js';
export { CATEGORIES, type Category } from '../domain/ports.js';
export { classifyWithOrgModel, loadOrgModel } from '../domain/org-triage/org-model.js';
