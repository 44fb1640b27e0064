// @ts-check
// Load: the realistic mix at a steady arrival rate (RATE iterations/s for DURATION).
import { requireKey, mixedIteration, thresholds } from './lib.js';

export const options = {
  scenarios: {
    load: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 100),
      timeUnit: '1s',
      duration: __ENV.DURATION || '5m',
      preAllocatedVUs: Number(__ENV.VUS || 50),
      maxVUs: Number(__ENV.MAX_VUS || 200),
    },
  },
  thresholds: thresholds(200, 500),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
