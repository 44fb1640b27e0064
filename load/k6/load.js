// @ts-check
// Load: the realistic mix at a steady arrival rate (RATE iterations/s for DURATION).
import { requireKey, mixedIteration, thresholds, vus } from './lib.js';

export const options = {
  scenarios: {
    load: Object.assign(
      {
        executor: 'constant-arrival-rate',
        rate: Number(__ENV.RATE || 100),
        timeUnit: '1s',
        duration: __ENV.DURATION || '5m',
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
