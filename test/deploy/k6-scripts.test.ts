// The k6 scripts in load/k6 parse on the oldest k6 they support (v0.48: ES2017 syntax through
// Babel; object spread, optional catch binding, ?. and ?? are SyntaxErrors there), checked
// twice: with an ES2017 parser always, and with the real k6 binary (scripts/k6.ts) when there
// is one, whose `inspect` also validates the options: VU settings that cannot contradict each
// other, DURATION_SCALE for spike and stress, the cap on rate-limited responses.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'acorn';
import { ROOT } from '../../scripts/validate-deploy.js';
import { k6Binary } from '../../scripts/k6.js';

const DIR = path.join(ROOT, 'load/k6');
const SCRIPTS = readdirSync(DIR).filter((f) => f.endsWith('.js'));
const K6 = k6Binary();

interface Inspected {
  scenarios?: Record<
    string,
    { preAllocatedVUs?: number; maxVUs?: number; stages?: { duration: string }[] }
  >;
  thresholds?: Record<string, string[]>;
  totalDuration?: string;
}

/** `k6 inspect --execution-requirements` of a script with `-e` variables. */
function inspect(script: string, env: Record<string, string> = {}): Inspected {
  const args = ['inspect', '--execution-requirements'];
  for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
  const res = spawnSync(K6!, [...args, path.join(DIR, script)], { encoding: 'utf8' });
  assert.equal(res.status, 0, `k6 inspect ${script}: ${res.stderr.slice(0, 600)}`);
  return JSON.parse(res.stdout) as Inspected;
}

/** "1m20s" → 80. */
function seconds(duration: string): number {
  let total = 0;
  for (const m of duration.matchAll(/(\d+(?:\.\d+)?)(h|m|s)/g)) {
    total += Number(m[1]) * { h: 3600, m: 60, s: 1 }[m[2] as 'h' | 'm' | 's'];
  }
  return total;
}

describe('load/k6 scripts', () => {
  it('when a script is parsed as ES2017 (what k6 v0.48 accepts), then it parses', () => {
    assert.ok(SCRIPTS.length >= 6, SCRIPTS.join(', '));
    for (const script of SCRIPTS) {
      const text = readFileSync(path.join(DIR, script), 'utf8');
      assert.doesNotThrow(
        () => parse(text, { ecmaVersion: 2017, sourceType: 'module' }),
        `${script} uses syntax newer than ES2017`,
      );
    }
  });

  it('when the ES2017 check meets object spread or optional catch binding, then it fails (the check can fail)', () => {
    for (const bad of ['const a = { ...b };', 'try { f(); } catch { g(); }', 'const c = a?.b;']) {
      assert.throws(() => parse(bad, { ecmaVersion: 2017, sourceType: 'module' }), bad);
    }
  });

  it(
    'when k6 is here, then every script parses and its options validate',
    { skip: !K6 && 'no k6 binary ($K6, ../shared/tools/k6/k6 or PATH)' },
    () => {
      for (const script of SCRIPTS.filter((s) => s !== 'lib.js')) inspect(script);
    },
  );

  it(
    'when MAX_VUS is below the default pre-allocation, then the VU settings still agree',
    { skip: !K6 && 'no k6 binary' },
    () => {
      for (const script of ['load.js', 'soak.js', 'spike.js', 'stress.js']) {
        const [scenario] = Object.values(inspect(script, { MAX_VUS: '10' }).scenarios ?? {});
        assert.equal(scenario?.maxVUs, 10, script);
        assert.ok(
          (scenario?.preAllocatedVUs ?? Infinity) <= 10,
          `${script}: preAllocatedVUs ≤ maxVUs`,
        );
      }
    },
  );

  it(
    'when DURATION_SCALE is set, then spike and stress stages shrink with it',
    { skip: !K6 && 'no k6 binary' },
    () => {
      for (const script of ['spike.js', 'stress.js']) {
        const full = seconds(inspect(script).totalDuration ?? '');
        const tenth = seconds(inspect(script, { DURATION_SCALE: '0.1' }).totalDuration ?? '');
        assert.ok(tenth < full / 4, `${script}: ${tenth} s at 0.1 vs ${full} s`);
      }
    },
  );

  it(
    'when a run is mostly rate-limited, then a threshold fails it (429s are capped)',
    { skip: !K6 && 'no k6 binary' },
    () => {
      for (const script of SCRIPTS.filter((s) => s !== 'lib.js')) {
        const thresholds = inspect(script).thresholds ?? {};
        assert.match(String(thresholds.rate_limited_share), /^rate<0\.\d+$/, script);
      }
    },
  );
});
