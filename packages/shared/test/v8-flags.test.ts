// V8_FLAGS: only the heap-growing flags that take effect at run time are accepted. (What they
// do to memory is measured by the benchmark, docs/performance.md, not by a timed test.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyV8Flags, ConfigError, loadConfig, v8FlagsEnv, z } from '../src/index.js';

const schema = z.object({ V8_FLAGS: v8FlagsEnv('--heap-growing-percent=25') });

test('when V8_FLAGS is unset, then the service default applies', () => {
  assert.equal(loadConfig(schema, {}).V8_FLAGS, '--heap-growing-percent=25');
});

test('when V8_FLAGS lists heap-sizing flags, then they are accepted as given', () => {
  const value = '--heap-growing-percent=50  --optimize-for-size --no-parallel-scavenge';
  assert.equal(loadConfig(schema, { V8_FLAGS: value }).V8_FLAGS, value);
  // 0 is V8's own default growing factor: how an operator turns the service default off.
  assert.equal(
    loadConfig(schema, { V8_FLAGS: '--heap-growing-percent=0' }).V8_FLAGS,
    '--heap-growing-percent=0',
  );
  assert.doesNotThrow(() => applyV8Flags('--heap-growing-percent=0'));
});

test('when V8_FLAGS holds any other flag or text, then start-up fails naming it', () => {
  for (const bad of [
    '--expose-gc',
    '--allow-natives-syntax',
    'heap-growing-percent=5',
    '--heap-growing-percent=x',
    '--max-semi-space-size=8',
    '--parallel-scavenge=1',
    '--no-parallel-marking',
    '--heap-growing-percent=5;rm',
  ]) {
    assert.throws(
      () => loadConfig(schema, { V8_FLAGS: bad }),
      (err: unknown) => err instanceof ConfigError && err.message.includes(bad.split(/[=;]/)[0]!),
      bad,
    );
  }
});
