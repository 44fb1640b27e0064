// `@support-agent/answers/confidence`: how the answers service scores its confidence in an
// answer from the search hits it cites, for the tools that fit and check that model outside
// the service (scripts/fit-confidence.ts, knowledge's tests). The service itself never imports
// this file.
export {
  ANSWER_FEATURES,
  answerFeatures,
  answerProbability,
  checkConfidenceModel,
  type ConfidenceModel,
} from '../domain/confidence.js';
export { relevantHits, SEARCH_LIMIT } from '../domain/generate-answer.js';
export type { KbHit } from '../domain/ports.js';
