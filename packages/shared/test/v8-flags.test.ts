// V8_FLAGS: only the heap-growing flags that take effect at run time are accepted. (What they
// do to memory is measured by the benchmark, docs/performance.md, not by a timed test.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import {
  applyV8Flags,
  ConfigError,
  loadConfig,
  semiSpaceMaxEnv,
  v8FlagsEnv,
  z,
} from '../src/index.js';

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

/**
 * Runs a process that holds its young generation while it loads (as a service does) and then
 * keeps many young objects alive (as a bulk import does, so V8 grows its young generation)
 * with `capSemiSpace(cap)`; returns its largest semi-space, MB. In a child: the cap changes a
 * process-wide V8 setting.
 */
async function largestSemiSpaceMb(cap: number): Promise<number> {
  const script = `
    import ${JSON.stringify(new URL('../src/young-generation.ts', import.meta.url).href)};
    import { getHeapSpaceStatistics } from 'node:v8';
    import { capSemiSpace } from ${JSON.stringify(new URL('../src/v8-flags.ts', import.meta.url).href)};
    capSemiSpace(${cap});
    let largest = 0;
    const keep = [];
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 50000; i++) keep.push({ round, i, s: 'x' + i });
      if (keep.length > 400000) keep.length = 0;
      // Lets the cap's GC observer run between rounds, as between a service's requests.
      await new Promise((r) => setImmediate(r));
      const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      largest = Math.max(largest, young.space_size / 2 / 1048576);
    }
    console.log(largest);
  `;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  return Number(stdout.trim());
}

test('when the semi-space is capped, then a growing young generation stops at the cap', async () => {
  const [uncapped, capped] = await Promise.all([largestSemiSpaceMb(0), largestSemiSpaceMb(4)]);
  // Without the cap V8 grows it past 4 MB on this load (16 MB on 64-bit Node 20).
  assert.ok(uncapped > 4, `uncapped ${uncapped} MB`);
  assert.equal(capped, 4);
});

test('when V8_SEMI_SPACE_MAX_MB is not 0 or a power of two up to 64, then start-up fails', () => {
  const semi = z.object({ V8_SEMI_SPACE_MAX_MB: semiSpaceMaxEnv(8, 'test') });
  assert.equal(loadConfig(semi, {}).V8_SEMI_SPACE_MAX_MB, 8);
  assert.equal(loadConfig(semi, { V8_SEMI_SPACE_MAX_MB: '0' }).V8_SEMI_SPACE_MAX_MB, 0);
  assert.equal(loadConfig(semi, { V8_SEMI_SPACE_MAX_MB: '16' }).V8_SEMI_SPACE_MAX_MB, 16);
  for (const bad of ['6', '128', '-2', 'x', '2.5'])
    assert.throws(
      () => loadConfig(semi, { V8_SEMI_SPACE_MAX_MB: bad }),
      (err: unknown) => err instanceof ConfigError && err.message.includes('V8_SEMI_SPACE_MAX_MB'),
      bad,
    );
});
