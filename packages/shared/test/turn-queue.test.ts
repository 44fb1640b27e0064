// TurnQueue (turn-queue.ts): knowledge runs its searches about a millisecond per turn of the
// event loop, so that their answers leave before the next ones run.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { TurnQueue, sleep } from '../src/index.js';

/** Counts turns of the event loop: one immediate per turn, for `turns` turns. */
function turnCounter(turns: number): { now: () => number } {
  let turn = 0;
  const tick = () => {
    if (++turn < turns) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turn };
}

/** Keeps the CPU busy for `ms`, as a search does. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('when tasks arrive in one turn and the budget is 0, then the first starts at once and each next one a turn later, in order', async () => {
  const queue = new TurnQueue(0);
  const clock = turnCounter(50);
  const started: Array<[number, number]> = [];
  const results = await Promise.all(
    [0, 1, 2, 3, 4].map((i) =>
      queue.start(async () => {
        started.push([i, clock.now()]);
        return i * 10;
      }),
    ),
  );
  assert.deepEqual(results, [0, 10, 20, 30, 40]);
  assert.deepEqual(
    started.map(([i]) => i),
    [0, 1, 2, 3, 4],
  );
  assert.equal(started[0]![1], 0, 'the first task did not wait');
  for (let k = 1; k < started.length; k++)
    assert.ok(
      started[k]![1] > started[k - 1]![1],
      `task ${k} started in the same turn as ${k - 1}`,
    );
  assert.equal(queue.backlog, 0);
});

test('when tasks take CPU, then each turn runs them until its budget is spent, in order', async () => {
  const queue = new TurnQueue(5);
  const clock = turnCounter(200);
  const turns: number[] = [];
  await Promise.all(
    Array.from({ length: 12 }, () =>
      queue.start(async () => {
        turns.push(clock.now());
        work(2);
      }),
    ),
  );
  // 2 ms each against 5 ms: at most three a turn (the third starts at 4 ms), and more than one
  // in a turn that was not preempted.
  const perTurn = new Map<number, number>();
  for (const t of turns) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  assert.deepEqual(
    turns,
    [...turns].sort((a, b) => a - b),
  );
  for (const [turn, n] of perTurn) assert.ok(n <= 3, `turn ${turn} ran ${n}`);
  assert.ok(Math.max(...perTurn.values()) >= 2, `one task per turn: ${turns.join(' ')}`);
});

test('when a task awaits I/O, then the next one still starts, a turn later', async () => {
  const queue = new TurnQueue(0);
  const events: string[] = [];
  await Promise.all([
    queue.start(async () => {
      events.push('slow started');
      await sleep(30);
      events.push('slow done');
    }),
    queue.start(async () => {
      events.push('quick started');
    }),
  ]);
  assert.deepEqual(events, ['slow started', 'quick started', 'slow done']);
});

test('when a task throws or rejects, then its caller gets the error and the tasks after it still run', async () => {
  const queue = new TurnQueue(0);
  const outcomes = await Promise.allSettled([
    queue.start(() => {
      throw new Error('thrown');
    }),
    queue.start(async () => {
      throw new Error('rejected');
    }),
    queue.start(async () => 'ran'),
  ]);
  assert.deepEqual(
    outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
    ['thrown', 'rejected', 'ran'],
  );
  // Once the queue is empty and a turn has passed, a task starts at once again.
  await new Promise((r) => setImmediate(r));
  let ranAtOnce = false;
  const p = queue.start(async () => {
    ranAtOnce = true;
  });
  assert.equal(ranAtOnce, true);
  await p;
});

test('when an http2 server answers through it, then the first answer reaches the client before the last request is worked on', async () => {
  const queue = new TurnQueue(1);
  const events: string[] = [];
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const n = headers[':path']!.slice(1);
    stream.resume();
    stream.on('end', () => {
      void queue.start(async () => {
        events.push(`server works on ${n}`);
        work(3);
        stream.respond({ ':status': 200 });
        stream.end(n);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const count = 8;
    await Promise.all(
      Array.from(
        { length: count },
        (_, n) =>
          new Promise<void>((resolve, reject) => {
            const req = client.request({ ':method': 'POST', ':path': `/${n}` });
            req.on('response', () => events.push(`client got ${n}`));
            req.on('error', reject);
            req.resume();
            req.on('end', resolve);
            req.end();
          }),
      ),
    );
    const firstAnswer = events.indexOf('client got 0');
    const lastWork = events.indexOf(`server works on ${count - 1}`);
    assert.ok(firstAnswer >= 0 && lastWork >= 0, events.join(', '));
    assert.ok(firstAnswer < lastWork, `answers waited for all the work: ${events.join(', ')}`);
  } finally {
    client.close();
    await new Promise((r) => server.close(r));
  }
});
