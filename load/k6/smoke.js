// @ts-check
// Smoke: one virtual user calls every operation a few times; any failure fails the run.
import {
  requireKey,
  searchKb,
  getFaq,
  listTickets,
  createTicket,
  generateAnswer,
  thresholds,
} from './lib.js';

export const options = {
  vus: 1,
  iterations: Number(__ENV.ITERATIONS || 5),
  thresholds: Object.assign(thresholds(1000, 2000), { checks: ['rate==1.0'] }),
};

export function setup() {
  requireKey();
}

export default function () {
  searchKb();
  getFaq();
  listTickets();
  createTicket();
  generateAnswer();
}
