// Wakeup (wakeup.ts): the loops' sleep that a write or a stop ends early.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Wakeup } from '../src/index.js';

test('when nobody wakes a sleeper, then it resolves after its time', async () => {
  const wakeup = new Wakeup();
  const started = performance.now();
  await wakeup.sleep(30);
  assert.ok(performance.now() - started >= 25, 'slept its time');
  assert.equal(wakeup.waiting, false, 'the sleeper is no longer waiting');
});

test('when a sleeper is woken, then it resolves at once and its timer no longer holds the process', async () => {
  const wakeup = new Wakeup();
  const started = performance.now();
  const slept = wakeup.sleep(60_000);
  assert.equal(wakeup.waiting, true);
  wakeup.wakeAll();
  await slept;
  assert.ok(performance.now() - started < 1_000, 'woke long before its time');
  assert.equal(wakeup.waiting, false);
  // A timer left behind would keep the test process alive for a minute; the runner's own
  // timeout would then fail the file.
});

test('when sleepers and waiters are woken, then all of them resolve, and a later wake-up wakes only later sleepers', async () => {
  const wakeup = new Wakeup();
  const order: string[] = [];
  const a = wakeup.sleep(60_000).then(() => order.push('a'));
  const b = wakeup.wait().then(() => order.push('b'));
  wakeup.wakeAll();
  await Promise.all([a, b]);
  assert.deepEqual(order, ['a', 'b']);
  const c = wakeup.sleep(20).then(() => order.push('c'));
  await c;
  assert.deepEqual(order, ['a', 'b', 'c']);
  wakeup.wakeAll(); // nobody waiting: nothing happens
  assert.equal(wakeup.waiting, false);
});

test('when a sleeper times out, then it leaves the waiters, so a wake-up long after does not reach it', async () => {
  const wakeup = new Wakeup();
  await wakeup.sleep(5);
  await wakeup.sleep(5);
  assert.equal(wakeup.waiting, false, 'timed-out sleepers are not kept');
});
