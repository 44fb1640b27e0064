// @ts-check
// Soak: a moderate steady mix for a long time (default 1 h) to surface leaks and drift.
import { requireKey, mixedIteration, thresholds, vus } from './lib.js';

export const options = {
  scenarios: {
    soak: Object.assign(
      {
        executor: 'constant-arrival-rate',
        rate: Number(__ENV.RATE || 50),
        timeUnit: '1s',
        duration: __ENV.DURATION || '1h',
      },
      vus(50, 200),
    ),
  },
  thresholds: thresholds(200, 500),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
