// @ts-check
// Soak: a moderate steady mix for a long time (default 1 h) to surface leaks and drift.
import { requireKey, mixedIteration, thresholds } from './lib.js';

export const options = {
  scenarios: {
    soak: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 50),
      timeUnit: '1s',
      duration: __ENV.DURATION || '1h',
      preAllocatedVUs: 50,
      maxVUs: Number(__ENV.MAX_VUS || 200),
    },
  },
  thresholds: thresholds(200, 500),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
