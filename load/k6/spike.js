// @ts-check
// Spike: a sudden 10x burst over the baseline, then back; recovery must be quick.
import { requireKey, mixedIteration, thresholds } from './lib.js';

const base = Number(__ENV.RATE || 50);

export const options = {
  scenarios: {
    spike: {
      executor: 'ramping-arrival-rate',
      startRate: base,
      timeUnit: '1s',
      preAllocatedVUs: 100,
      maxVUs: Number(__ENV.MAX_VUS || 1000),
      stages: [
        { target: base, duration: '1m' },
        { target: base * 10, duration: '10s' },
        { target: base * 10, duration: '1m' },
        { target: base, duration: '10s' },
        { target: base, duration: '2m' },
      ],
    },
  },
  thresholds: { ...thresholds(1000, 3000), http_req_failed: ['rate<0.05'] },
};

export function setup() {
  requireKey();
}

export default mixedIteration;
