// @ts-check
// Soak: a moderate steady mix for a long time (default 1 h) to surface leaks and drift.
import { requireKey, mixedIteration, thresholds, steadyArrivals } from './lib.js';

export const options = {
  scenarios: {
    soak: steadyArrivals(50, '1h', 50, 200),
  },
  thresholds: thresholds(200, 500),
};

export function setup() {
  requireKey();
}

export default mixedIteration;
