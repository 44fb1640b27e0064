// @ts-check
// Load: the realistic mix at a steady arrival rate (RATE iterations/s for DURATION).
import { requireKey, mixedIteration, thresholds, steadyArrivals } from './lib.js';

export const options = {
  scenarios: {
    load: steadyArrivals(100, '5m', 50, 200),
  },
  thresholds: thresholds(200, 500),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
