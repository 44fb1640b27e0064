// @ts-check
// Stress: ramps the arrival rate past the expected capacity to find the knee.
// 11 min by default; DURATION_SCALE=0.1 runs every stage a tenth as long.
import { requireKey, mixedIteration, thresholds, vus, scaled } from './lib.js';

const peak = Number(__ENV.PEAK_RATE || 1000);

export const options = {
  scenarios: {
    stress: Object.assign(
      {
        executor: 'ramping-arrival-rate',
        startRate: Math.round(peak / 10),
        timeUnit: '1s',
        stages: [
          { target: Math.round(peak / 4), duration: scaled(120) },
          { target: Math.round(peak / 2), duration: scaled(120) },
          { target: peak, duration: scaled(180) },
          { target: Math.round(peak * 1.5), duration: scaled(180) },
          { target: 0, duration: scaled(60) },
        ],
      },
      vus(100, 1000),
    ),
  },
  // Under stress some 429/503 are expected; the service must still answer fast and in contract.
  thresholds: Object.assign(thresholds(800, 2000), {
    http_req_failed: ['rate<0.10'],
    // Under stress the limiter may answer more; the cap still fails a run that is mostly 429s.
    rate_limited_share: [`rate<${Number(__ENV.MAX_429_SHARE || 0.2)}`],
  }),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
