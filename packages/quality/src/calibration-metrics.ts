/**
 * Measures of a probability estimate against outcomes: expected calibration error,
 * the reliability diagram (as data and as SVG), and the precision/coverage curve of
 * acting only above a threshold. Used by `npm run fit:confidence` and `eval:answers`.
 */

export interface Outcome {
  /** Estimated probability of being right, 0–1. */
  p: number;
  right: boolean;
}

export interface ReliabilityBin {
  from: number;
  to: number;
  count: number;
  meanConfidence: number;
  accuracy: number;
}

/** Equal-width bins over [0,1]; empty bins are left out. */
export function reliabilityBins(outcomes: Outcome[], bins = 10): ReliabilityBin[] {
  const out: ReliabilityBin[] = [];
  for (let b = 0; b < bins; b++) {
    const inBin = outcomes.filter((o) => Math.min(bins - 1, Math.floor(o.p * bins)) === b);
    if (inBin.length === 0) continue;
    out.push({
      from: b / bins,
      to: (b + 1) / bins,
      count: inBin.length,
      meanConfidence: inBin.reduce((s, o) => s + o.p, 0) / inBin.length,
      accuracy: inBin.filter((o) => o.right).length / inBin.length,
    });
  }
  return out;
}

/** Expected calibration error: |confidence − accuracy| averaged over bins, weighted by size. */
export function expectedCalibrationError(outcomes: Outcome[], bins = 10): number {
  if (outcomes.length === 0) return 0;
  return reliabilityBins(outcomes, bins).reduce(
    (s, b) => s + (b.count / outcomes.length) * Math.abs(b.meanConfidence - b.accuracy),
    0,
  );
}

export interface CurvePoint {
  threshold: number;
  /** Share of all outcomes at or above the threshold. */
  coverage: number;
  /** Share of those that are right (1 when none). */
  precision: number;
}

/** Precision and coverage when acting only at p ≥ threshold, for each threshold given. */
export function precisionCoverage(outcomes: Outcome[], thresholds: number[]): CurvePoint[] {
  return thresholds.map((threshold) => {
    const kept = outcomes.filter((o) => o.p >= threshold);
    return {
      threshold,
      coverage: outcomes.length === 0 ? 0 : kept.length / outcomes.length,
      precision: kept.length === 0 ? 1 : kept.filter((o) => o.right).length / kept.length,
    };
  });
}

/** Mean log-loss (natural log), probabilities clipped away from 0 and 1. */
export function logLoss(outcomes: Outcome[]): number {
  if (outcomes.length === 0) return 0;
  let s = 0;
  for (const o of outcomes) {
    const p = Math.min(1 - 1e-6, Math.max(1e-6, o.p));
    s -= o.right ? Math.log(p) : Math.log(1 - p);
  }
  return s / outcomes.length;
}

/** A reliability diagram: accuracy per confidence bin against the diagonal, bar width ∝ count. */
export function reliabilitySvg(title: string, outcomes: Outcome[], bins = 10): string {
  const size = 360;
  const pad = 48;
  const plot = size - 2 * pad;
  const x = (v: number) => pad + v * plot;
  const y = (v: number) => size - pad - v * plot;
  const data = reliabilityBins(outcomes, bins);
  const max = Math.max(1, ...data.map((b) => b.count));
  const bars = data
    .map((b) => {
      const w = (b.to - b.from) * plot - 4;
      const opacity = (0.25 + 0.75 * (b.count / max)).toFixed(2);
      return (
        `<rect x="${(x(b.from) + 2).toFixed(1)}" y="${y(b.accuracy).toFixed(1)}" width="${w.toFixed(1)}" ` +
        `height="${(b.accuracy * plot).toFixed(1)}" fill="#3b6fb6" fill-opacity="${opacity}"/>` +
        `<circle cx="${x(b.meanConfidence).toFixed(1)}" cy="${y(b.accuracy).toFixed(1)}" r="3" fill="#c0392b"/>` +
        `<text x="${(x(b.from) + (b.to - b.from) * plot * 0.5).toFixed(1)}" y="${(y(b.accuracy) - 4).toFixed(1)}" ` +
        `font-size="9" text-anchor="middle">${b.count}</text>`
      );
    })
    .join('\n  ');
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (t) =>
        `<text x="${x(t).toFixed(1)}" y="${size - pad + 14}" font-size="10" text-anchor="middle">${t * 100}</text>` +
        `<text x="${pad - 6}" y="${(y(t) + 3).toFixed(1)}" font-size="10" text-anchor="end">${t * 100}</text>`,
    )
    .join('\n  ');
  const ece = (100 * expectedCalibrationError(outcomes, bins)).toFixed(1);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" font-family="sans-serif">
  <rect width="${size}" height="${size}" fill="white"/>
  <text x="${size / 2}" y="20" font-size="13" text-anchor="middle">${escapeXml(title)}</text>
  <text x="${size / 2}" y="36" font-size="11" text-anchor="middle">n = ${outcomes.length}, ECE = ${ece} points</text>
  <rect x="${pad}" y="${pad}" width="${plot}" height="${plot}" fill="none" stroke="#999"/>
  <line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#999" stroke-dasharray="4 3"/>
  ${bars}
  ${ticks}
  <text x="${size / 2}" y="${size - 10}" font-size="11" text-anchor="middle">confidence (%)</text>
  <text x="14" y="${size / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 14 ${size / 2})">share right (%)</text>
</svg>
`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
