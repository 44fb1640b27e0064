// Calibration measures: reliability bins, expected calibration error, log-loss and the
// precision/coverage curve the answer threshold is chosen from.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  expectedCalibrationError,
  logLoss,
  precisionCoverage,
  reliabilityBins,
  reliabilitySvg,
  type Outcome,
} from '@support-agent/quality';

const outcome = (p: number, right: boolean): Outcome => ({ p, right });

describe('calibration measures', () => {
  it('when estimates are binned, then each bin holds its count, mean estimate and share right, empty bins left out', () => {
    const bins = reliabilityBins([
      outcome(0.05, false),
      outcome(0.15, true),
      outcome(0.95, true),
      outcome(0.91, false),
      outcome(1, true),
    ]);
    assert.deepEqual(
      bins.map((b) => [b.from, b.count]),
      [
        [0, 1],
        [0.1, 1],
        [0.9, 3],
      ],
    );
    const top = bins[2]!;
    assert.ok(Math.abs(top.meanConfidence - (0.95 + 0.91 + 1) / 3) < 1e-12);
    assert.ok(Math.abs(top.accuracy - 2 / 3) < 1e-12);
  });

  it('when every estimate matches the share right in its bin, then the calibration error is 0', () => {
    const perfect = [outcome(0.5, true), outcome(0.5, false), outcome(1, true), outcome(0, false)];
    assert.equal(expectedCalibrationError(perfect), 0);
  });

  it('when estimates are overconfident, then the calibration error is the size-weighted gap', () => {
    // 0.9 claimed, half right: a gap of 0.4 over all outcomes.
    const over = [outcome(0.9, true), outcome(0.9, false)];
    assert.ok(Math.abs(expectedCalibrationError(over) - 0.4) < 1e-12);
    assert.equal(expectedCalibrationError([]), 0);
  });

  it('when log-loss is computed, then certainty that is wrong costs a bounded amount (clipped)', () => {
    assert.ok(Math.abs(logLoss([outcome(0.5, true)]) - Math.log(2)) < 1e-12);
    const wrong = logLoss([outcome(1, false)]);
    assert.ok(Number.isFinite(wrong) && wrong > 10, String(wrong));
  });

  it('when a threshold is applied, then coverage is the share kept and precision the share of those right', () => {
    const outcomes = [
      outcome(0.9, true),
      outcome(0.8, false),
      outcome(0.4, true),
      outcome(0.2, false),
    ];
    const [low, high, none] = precisionCoverage(outcomes, [0.3, 0.85, 0.99]);
    assert.deepEqual(low, { threshold: 0.3, coverage: 0.75, precision: 2 / 3 });
    assert.deepEqual(high, { threshold: 0.85, coverage: 0.25, precision: 1 });
    // Nothing kept: nothing wrong said.
    assert.deepEqual(none, { threshold: 0.99, coverage: 0, precision: 1 });
  });

  it('when the reliability diagram is drawn, then it is an SVG with one bar per non-empty bin and the title escaped', () => {
    const svg = reliabilitySvg('a <b> & c', [
      outcome(0.15, true),
      outcome(0.95, true),
      outcome(0.91, false),
    ]);
    assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.equal(svg.match(/fill="#3b6fb6"/g)?.length, 2);
    assert.ok(svg.includes('a &lt;b&gt; &amp; c'));
    assert.match(svg, /n = 3, ECE = /);
  });
});
