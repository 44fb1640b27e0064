// @ts-check
// Stress: ramps the arrival rate past the expected capacity to find the knee.
import { requireKey, mixedIteration, thresholds } from './lib.js';

const peak = Number(__ENV.PEAK_RATE || 1000);

export const options = {
  scenarios: {
    stress: {
      executor: 'ramping-arrival-rate',
      startRate: Math.round(peak / 10),
      timeUnit: '1s',
      preAllocatedVUs: 100,
      maxVUs: Number(__ENV.MAX_VUS || 1000),
      stages: [
        { target: Math.round(peak / 4), duration: '2m' },
        { target: Math.round(peak / 2), duration: '2m' },
        { target: peak, duration: '3m' },
        { target: Math.round(peak * 1.5), duration: '3m' },
        { target: 0, duration: '1m' },
      ],
    },
  },
  // Under stress some 429/503 are expected; the service must still answer fast and in contract.
  thresholds: { ...thresholds(800, 2000), http_req_failed: ['rate<0.10'] },
};

export function setup() {
  requireKey();
}

export default mixedIteration;
