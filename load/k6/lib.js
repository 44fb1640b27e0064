// @ts-check
// Shared pieces of the k6 scripts: configuration, one function per operation
// with checks on every response, idempotency keys on creates, and 429 handling.
// Only k6's own modules are used, so the scripts run on a stock k6 binary, and only ES2017
// syntax (no object spread, optional catch binding, ?. or ??), which k6 v0.48 and later
// parse (test/deploy/k6-scripts.test.ts checks it).
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Counter, Rate } from 'k6/metrics';
import exec from 'k6/execution';

export const BASE_URL = (__ENV.BASE_URL || 'http://localhost:8080').replace(/\/$/, '');
export const API_KEY = __ENV.API_KEY || '';
export const PREFIX = __ENV.API_PREFIX || '/api/v1/agent';

export const rateLimited = new Counter('rate_limited');
/** Share of responses that were 429 (rate or deflection limit): a run that measures the limiter fails. */
export const limitedShare = new Rate('rate_limited_share');
export const deflectionLimited = new Counter('deflection_limited');
export const contractErrors = new Rate('contract_errors');

const QUERIES = [
  'How do I reset my password?',
  'export tickets to CSV',
  'Which plans include single sign-on?',
  'rate limit for API keys',
  'How can I delete my account and data?',
  'webhook retries',
];

/** Thresholds shared by every scenario; scripts tighten or relax them. */
export function thresholds(p95 = 300, p99 = 800) {
  /** @type {Record<string, string[]>} */
  const t = {
    checks: ['rate>0.99'],
    contract_errors: ['rate<0.01'],
    http_req_failed: ['rate<0.02'],
    // A 429 is handled, not failed: without this cap a run of mostly 429s would pass.
    rate_limited_share: [`rate<${Number(__ENV.MAX_429_SHARE || 0.05)}`],
  };
  for (const op of ['search', 'faq', 'list', 'create', 'answer']) {
    t[`http_req_duration{op:${op}}`] = [`p(95)<${p95}`, `p(99)<${p99}`];
  }
  return t;
}

/**
 * The executor's VUs: preAllocatedVUs (VUS) never above maxVUs (MAX_VUS), whichever is set, so
 * the two settings cannot contradict each other (k6 refuses preAllocatedVUs > maxVUs).
 */
export function vus(preAllocated, max) {
  const maxVUs = Number(__ENV.MAX_VUS || max);
  const preAllocatedVUs = Math.min(Number(__ENV.VUS || preAllocated), maxVUs);
  return { preAllocatedVUs, maxVUs };
}

/** A constant-arrival-rate scenario: RATE iterations/s (default `rate`) for DURATION. */
export function steadyArrivals(rate, duration, preAllocated, max) {
  return Object.assign(
    {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || rate),
      timeUnit: '1s',
      duration: __ENV.DURATION || duration,
    },
    vus(preAllocated, max),
  );
}

/** DURATION_SCALE (default 1) times `seconds`, as a k6 duration: shortens or stretches stages. */
export function scaled(seconds) {
  const scale = Number(__ENV.DURATION_SCALE || 1);
  if (!(scale > 0))
    throw new Error(`DURATION_SCALE must be a positive number (got ${__ENV.DURATION_SCALE})`);
  return `${Math.max(1, Math.round(seconds * scale))}s`;
}

function params(op, extraHeaders = {}) {
  return {
    headers: Object.assign(
      { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
      extraHeaders,
    ),
    tags: { op },
    // 429 is an expected, handled outcome; it must not count as a failed request.
    responseCallback: http.expectedStatuses({ min: 200, max: 299 }, 429),
  };
}

/** Honours Retry-After on 429 (capped so a scenario's duration stays bounded). */
function backOffIf429(res) {
  limitedShare.add(res.status === 429);
  if (res.status !== 429) return false;
  const body = safeJson(res);
  if (body && body.error && body.error.code === 'deflection_limit_reached')
    deflectionLimited.add(1);
  else rateLimited.add(1);
  const retryAfter = Number(res.headers['Retry-After'] || 1);
  sleep(Math.min(Number.isFinite(retryAfter) ? retryAfter : 1, 5));
  return true;
}

function safeJson(res) {
  try {
    return res.json();
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- k6 v0.48 cannot parse `catch {`
  } catch (err) {
    return null;
  }
}

function record(res, op, ok) {
  contractErrors.add(!ok, { op });
  return ok;
}

function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}

export function searchKb() {
  const q = encodeURIComponent(pick(QUERIES));
  const res = http.get(`${BASE_URL}${PREFIX}/kb/search?query=${q}&limit=5`, params('search'));
  if (backOffIf429(res)) return;
  const body = safeJson(res);
  record(
    res,
    'search',
    check(res, {
      'search: 200': (r) => r.status === 200,
      'search: results sorted by score': () =>
        !!body &&
        Array.isArray(body.results) &&
        body.results.every((x, i) => i === 0 || body.results[i - 1].score >= x.score),
    }),
  );
}

export function getFaq() {
  const res = http.get(`${BASE_URL}${PREFIX}/faq`, params('faq'));
  if (backOffIf429(res)) return;
  const body = safeJson(res);
  record(
    res,
    'faq',
    check(res, {
      'faq: 200': (r) => r.status === 200,
      'faq: has message and ticket_count': () =>
        !!body && typeof body.message === 'string' && typeof body.ticket_count === 'number',
    }),
  );
}

export function listTickets() {
  let res = http.get(`${BASE_URL}${PREFIX}/tickets?limit=20`, params('list'));
  if (backOffIf429(res)) return;
  let body = safeJson(res);
  const ok = check(res, {
    'list: 200': (r) => r.status === 200,
    'list: tickets array and next_cursor key': () =>
      !!body && Array.isArray(body.tickets) && 'next_cursor' in body,
  });
  record(res, 'list', ok);
  // Follow one cursor page in a tenth of the iterations, as a paging agent would.
  if (ok && body.next_cursor && Math.random() < 0.1) {
    res = http.get(
      `${BASE_URL}${PREFIX}/tickets?limit=20&cursor=${encodeURIComponent(body.next_cursor)}`,
      params('list'),
    );
    if (backOffIf429(res)) return;
    body = safeJson(res);
    record(res, 'list', check(res, { 'list page 2: 200': (r) => r.status === 200 }));
  }
}

export function createTicket() {
  // One idempotency key per logical create; a retry after a timeout reuses it.
  const key = `k6-${exec.scenario.name}-${exec.vu.idInTest}-${exec.vu.iterationInScenario}-${Date.now()}`;
  const payload = JSON.stringify({
    content: `Load test ticket: ${pick(QUERIES)}`,
    authorName: 'k6',
  });
  let res = http.post(
    `${BASE_URL}${PREFIX}/tickets`,
    payload,
    params('create', { 'Idempotency-Key': key }),
  );
  if (res.status === 0 || res.status >= 500) {
    res = http.post(
      `${BASE_URL}${PREFIX}/tickets`,
      payload,
      params('create', { 'Idempotency-Key': key }),
    );
  }
  if (backOffIf429(res)) return;
  const body = safeJson(res);
  record(
    res,
    'create',
    check(res, {
      'create: 201': (r) => r.status === 201,
      'create: ticket_id and duplicate': () =>
        !!body && Number.isInteger(body.ticket_id) && typeof body.duplicate === 'boolean',
    }),
  );
}

export function generateAnswer() {
  const res = http.post(
    `${BASE_URL}${PREFIX}/answers`,
    JSON.stringify({ question: pick(QUERIES) }),
    params('answer'),
  );
  if (backOffIf429(res)) return;
  const body = safeJson(res);
  record(
    res,
    'answer',
    check(res, {
      'answer: 200': (r) => r.status === 200,
      'answer: confidence 0-100': () =>
        !!body &&
        Number.isInteger(body.confidence) &&
        body.confidence >= 0 &&
        body.confidence <= 100,
    }),
  );
}

/** The realistic mix of the five operations: reads dominate, creates and answers are rarer. */
export function mixedIteration() {
  const r = Math.random();
  if (r < 0.4) searchKb();
  else if (r < 0.6) listTickets();
  else if (r < 0.75) getFaq();
  else if (r < 0.9) createTicket();
  else generateAnswer();
}

/** Fails fast with a clear message when the script is started without a key. */
export function requireKey() {
  if (!API_KEY)
    throw new Error(
      'set API_KEY (a key with all five scopes), e.g. k6 run -e API_KEY=sak_live_… script.js',
    );
}
