// @ts-check
// Spike: a sudden 10x burst over the baseline, then back; recovery must be quick.
// 4 min 20 s by default; DURATION_SCALE=0.25 runs every stage a quarter as long.
import { requireKey, mixedIteration, thresholds, vus, scaled } from './lib.js';

const base = Number(__ENV.RATE || 50);

export const options = {
  scenarios: {
    spike: Object.assign(
      {
        executor: 'ramping-arrival-rate',
        startRate: base,
        timeUnit: '1s',
        stages: [
          { target: base, duration: scaled(60) },
          { target: base * 10, duration: scaled(10) },
          { target: base * 10, duration: scaled(60) },
          { target: base, duration: scaled(10) },
          { target: base, duration: scaled(120) },
        ],
      },
      vus(100, 1000),
    ),
  },
  thresholds: Object.assign(thresholds(1000, 3000), { http_req_failed: ['rate<0.05'] }),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
