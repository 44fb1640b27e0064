// Clock jumps of one service at a time, under load: the service's wall clock (libfaketime,
// changed while it runs; its monotonic clock untouched, as an NTP step leaves it) jumps +1 h and
// −1 h, across the end of the month (the deflection window) and across the end of the ISO week
// (the weekly digest). The stack runs on MariaDB and NATS without Redis, so the gateway's
// rate limits are its in-memory ones (Redis's own clock keeps the Redis ones). Invariants:
// every request ends with a success, a JSON 503 with Retry-After or a documented 429; every
// operation works again within 10 s; the monthly deflection limit is never exceeded and never
// starts over twice; no key gets more than its limit within a minute across a jump either way;
// the weekly digest is not built before its week ends and counts every ticket exactly once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { JumpingClock, faketimeLibrary } from '../support/faketime.js';
import {
  FAULT_ENV,
  faultOrg,
  groupViolations,
  phaseLine,
  probeAll,
  steadyLoad,
} from '../support/fault-run.js';
import { queryRows, waitForConsumer } from '../support/pipeline.js';
import { Stack, waitFor } from '../support/stack.js';
import type { SteadyLoad } from '../support/steady-load.js';

const ORG = 'clock-org';
const HOUR_S = 3_600;
const KEY_LIMIT = 20;
const DEFLECTION_LIMIT = 3;
const skip = faketimeLibrary() ? false : 'libfaketime is not installed (apt-get install faketime)';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until the process named (tickets, …, gateway) tells time by its clock's new offset. */
const settle = (name: string, clock = clocks.get(name)!) =>
  clock.seenBy(stack.metricsUrl(name === 'gateway' ? 'gateway-0' : name));

let stack: Stack;
let key: string;
let load: SteadyLoad;
const clocks = new Map<string, JumpingClock>();

/** Restarts a process on a clock of its own (offset 0 until the test moves it). */
async function onJumpingClock(name: string): Promise<JumpingClock> {
  const clock = JumpingClock.in(stack.options.dir, name);
  clocks.set(name, clock);
  if (name === 'gateway') {
    await stack.restartGateway(0, clock.env());
  } else {
    const proc = stack.service(name);
    await proc.stop();
    proc.start(clock.env());
    await stack.waitForService(name);
  }
  return clock;
}

/** The first instant of the next UTC month / ISO week (Monday 00:00 UTC). */
function nextMonthStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}
function nextWeekStart(now = new Date()): Date {
  const day = (now.getUTCDay() + 6) % 7; // Monday 0
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - day + 7));
}
const minutes = (at: Date, m: number) => new Date(at.getTime() + m * 60_000);

async function call(
  k: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const res = await fetch(`${stack.baseUrl()}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${k}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    retryAfter: res.headers.get('retry-after'),
  };
}

before(async () => {
  stack = await Stack.onTestBackends('clock-jumps', {
    // No Redis: the gateway counts rate limits in memory, the path a jump could break.
    redisUrl: undefined,
    env: FAULT_ENV,
  });
  key = await faultOrg(stack, ORG, {
    rate_limit_per_key_per_min: 1_000_000,
    rate_limit_per_org_per_min: 1_000_000,
  });
  // Every process on a clock of its own (offset 0 until a test moves it), before the load.
  for (const name of ['tickets', 'knowledge', 'answers', 'digest', 'gateway'])
    await onJumpingClock(name);
  load = steadyLoad(stack, key, 3);
  load.start();
  await waitFor(
    async () => load.creates.size >= 5,
    30_000,
    () => 'no tickets created',
  );
});

after(async () => {
  await load?.stop();
  await stack?.stop();
});

describe('clock jumps of one service at a time', { skip }, () => {
  it('when each service’s clock jumps +1 h and then −1 h under load, then every request keeps the contract and every operation works after each jump', async () => {
    for (const name of ['tickets', 'knowledge', 'answers', 'digest', 'gateway']) {
      const clock = clocks.get(name)!;
      for (const [label, offset] of [
        ['+1 h', HOUR_S],
        ['−1 h', -HOUR_S],
        ['back', 0],
      ] as const) {
        load.phase = `${name} ${label}`;
        clock.set(offset);
        await settle(name);
        const ms = await probeAll(load);
        console.log(
          `  ${name} clock ${label}: ${phaseLine(load, load.phase)}; every operation ok within ${ms} ms`,
        );
      }
    }
    assert.deepEqual(
      groupViolations(load),
      [],
      `${load.violations.length} requests broke the contract`,
    );
  });

  it('when the gateway’s clock jumps +1 h and −1 h within a minute, then a key still gets at most its limit in that minute', async () => {
    const clock = clocks.get('gateway')!;
    const org = `clock-rl-${randomBytes(3).toString('hex')}`;
    const k = await faultOrg(stack, org, {
      rate_limit_per_key_per_min: KEY_LIMIT,
      rate_limit_per_org_per_min: 1_000_000,
    });
    const t0 = Date.now();
    let allowed = 0;
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await call(k, 'GET', '/api/v1/agent/faq');
        if (r.status === 200) allowed++;
        else {
          assert.equal(r.status, 429, JSON.stringify(r.json));
          assert.ok(Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 60, `${r.retryAfter}`);
        }
      }
    };
    clock.set(0);
    await settle('gateway');
    await burst(KEY_LIMIT - 5);
    clock.set(HOUR_S);
    await settle('gateway');
    await burst(KEY_LIMIT);
    clock.set(-HOUR_S);
    await settle('gateway');
    await burst(KEY_LIMIT);
    clock.set(0);
    const within = Date.now() - t0;
    console.log(
      `  rate limit across gateway clock +1 h / −1 h: ${allowed} of ${KEY_LIMIT} allowed in ${within} ms`,
    );
    assert.ok(within < 60_000, `the bursts took ${within} ms`);
    assert.equal(allowed, KEY_LIMIT, 'requests allowed within one minute');
  });

  it('when the answers clock jumps across the end of the month and back, then the deflection limit starts over once and is never exceeded', async () => {
    const clock = clocks.get('answers')!;
    const org = `clock-defl-${randomBytes(3).toString('hex')}`;
    const k = await faultOrg(stack, org, {
      rate_limit_per_key_per_min: 1_000_000,
      rate_limit_per_org_per_min: 1_000_000,
      deflection_monthly_limit: DEFLECTION_LIMIT,
    });
    const boundary = nextMonthStart(new Date(Date.now() + HOUR_S * 1000));
    let unavailable = 0;
    const deflect = async (times: number) => {
      let high = 0;
      for (let i = 0; i < times; i++) {
        let r = await call(k, 'POST', '/api/v1/agent/answers', {
          question: 'Where can I download my invoices?',
        });
        // A 503 (with Retry-After) is within the contract: the question is asked again.
        for (let retry = 0; r.status === 503 && retry < 20; retry++) {
          assert.ok(r.retryAfter, 'a 503 without Retry-After');
          unavailable++;
          await sleep(250);
          r = await call(k, 'POST', '/api/v1/agent/answers', {
            question: 'Where can I download my invoices?',
          });
        }
        if (r.status === 200 && r.json.high_confidence === true) high++;
        else if (r.status !== 200) {
          assert.equal(r.status, 429, JSON.stringify(r.json));
          assert.equal((r.json.error as { code?: string }).code, 'deflection_limit_reached');
        }
      }
      return high;
    };
    clock.setTo(minutes(boundary, -30));
    await settle('answers');
    const before = await deflect(1);
    clock.setTo(minutes(boundary, 30)); // +1 h across the boundary: a new month
    await settle('answers');
    const next = await deflect(DEFLECTION_LIMIT + 2);
    clock.setTo(minutes(boundary, -20)); // −1 h: back in the old month by this clock
    await settle('answers');
    const back = await deflect(DEFLECTION_LIMIT);
    clock.setTo(minutes(boundary, 1)); // the month really starts: no second fresh start
    await settle('answers');
    const again = await deflect(DEFLECTION_LIMIT);
    clock.set(0);
    const rows = await queryRows<{ month: string; used: number; reserved: number }>(
      stack.mysqlUrl,
      'SELECT month, used, reserved FROM answers_deflection_months WHERE org_id = ? ORDER BY month',
      [org],
    );
    console.log(
      `  deflections across the month boundary (answers clock −30 min, +30 min, −20 min, +1 min): ` +
        `${before}, ${next}, ${back}, ${again}; ledger ${rows.map((r) => `${r.month}=${r.used}`).join(', ')}; ` +
        `503s retried ${unavailable}`,
    );
    assert.deepEqual([before, next, back, again], [1, DEFLECTION_LIMIT, 0, 0]);
    for (const r of rows) assert.ok(Number(r.used) + Number(r.reserved) <= DEFLECTION_LIMIT);
  });

  it('when the digest’s or the tickets’ clock jumps across the end of the ISO week, then the week is not built early and the digest counts every ticket once', async () => {
    const weekEnd = nextWeekStart();
    // The digest replica on a jumping clock, with its weekly run enabled.
    const digestClock = JumpingClock.in(stack.options.dir, 'digest-week');
    const digest = stack.service('digest');
    await digest.stop();
    digest.start({
      ...digestClock.env(),
      DIGEST_SCHEDULER_ENABLED: 'true',
      DIGEST_SCHEDULER_TICK_MS: '200',
      DIGEST_SCHEDULE_OFFSET_MINUTES: '5',
      DIGEST_SCHEDULE_MAX_LAG_WAIT_MS: '0',
    });
    await stack.waitForService('digest');
    load.phase = 'digest past the end of the week';
    digestClock.setTo(minutes(weekEnd, 30));
    await settle('digest', digestClock);
    await sleep(2_000); // ten scheduler ticks
    const ticketsClock = clocks.get('tickets')!;
    load.phase = 'tickets past the end of the week';
    ticketsClock.setTo(minutes(weekEnd, 30));
    await settle('tickets');
    await sleep(2_000);
    load.phase = 'tickets back';
    ticketsClock.set(0);
    digestClock.set(0);
    await settle('tickets');
    await settle('digest', digestClock);
    await probeAll(load);

    const thisWeek = new Date(weekEnd.getTime() - 7 * 24 * HOUR_S * 1000)
      .toISOString()
      .slice(0, 10);
    const runs = await queryRows<{ week_start: string }>(
      stack.mysqlUrl,
      'SELECT week_start FROM digest_runs WHERE week_start >= ?',
      [thisWeek],
    );
    assert.deepEqual(runs, [], 'a week was built before it ended');

    await load.stop();
    assert.deepEqual(
      groupViolations(load),
      [],
      `${load.violations.length} requests broke the contract`,
    );
    assert.equal(load.lost, 0);
    assert.equal(load.duplicates, 0);
    const tickets = await queryRows<{ idempotency_key: string; n: number; id: number }>(
      stack.mysqlUrl,
      'SELECT idempotency_key, COUNT(*) AS n, MIN(number) AS id FROM tickets WHERE org_id = ? GROUP BY idempotency_key',
      [ORG],
    );
    assert.deepEqual(
      tickets.filter((t) => Number(t.n) !== 1),
      [],
      'keys with two tickets',
    );
    assert.equal(tickets.length, load.creates.size, 'tickets = keys that got a 201');
    const counted = async () => {
      const [t] = await queryRows<{ n: number }>(
        stack.mysqlUrl,
        'SELECT COUNT(*) AS n FROM digest_tickets WHERE org_id = ?',
        [ORG],
      );
      const w = await queryRows<{ week_start: string; n: number }>(
        stack.mysqlUrl,
        'SELECT week_start, ticket_count AS n FROM digest_weeks WHERE org_id = ? ORDER BY week_start',
        [ORG],
      );
      return { tickets: Number(t!.n), weeks: w.reduce((s, r) => s + Number(r.n), 0), byWeek: w };
    };
    let c = await counted();
    await waitFor(
      async () => (c = await counted()).weeks >= tickets.length,
      30_000,
      () => `digest counted ${JSON.stringify(c)} of ${tickets.length}`,
    );
    await waitForConsumer(stack.nats.url, 'digest-aggregator', 30_000);
    c = await counted();
    console.log(
      `clock jumps: ${load.summary()}, tickets ${tickets.length}, digest counted ${c.tickets} ` +
        `(${c.byWeek.map((w) => `${w.week_start}: ${w.n}`).join(', ')})`,
    );
    assert.deepEqual([c.tickets, c.weeks], [tickets.length, tickets.length]);
  });
});
