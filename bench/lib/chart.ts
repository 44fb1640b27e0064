// A small hand-written SVG chart of a benchmark report: per operation and baseline, a bar of
// requests/s and bars of p50 and p99 latency. No dependencies.

export interface ChartRow {
  label: string;
  rps: number;
  p50: number;
  p99: number;
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const fmt = (x: number) => (x >= 100 ? String(Math.round(x)) : String(Math.round(x * 100) / 100));

export function renderChart(title: string, subtitle: string, rows: ChartRow[]): string {
  const rowH = 26;
  const labelW = 270;
  const panelW = 300;
  const gap = 50;
  const top = 64;
  const width = labelW + panelW * 2 + gap + 40;
  const height = top + rows.length * rowH + 40;
  const maxRps = Math.max(1, ...rows.map((r) => r.rps));
  const maxMs = Math.max(1, ...rows.map((r) => r.p99));
  const x1 = labelW;
  const x2 = labelW + panelW + gap;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="20" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="10" y="38" fill="#555">${esc(subtitle)}</text>`,
    `<text x="${x1}" y="${top - 8}" font-weight="bold">requests/s</text>`,
    `<text x="${x2}" y="${top - 8}" font-weight="bold">latency ms: <tspan fill="#2b8cbe">p50</tspan> / <tspan fill="#e34a33">p99</tspan></text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const w1 = (r.rps / maxRps) * (panelW - 60);
    const w50 = (r.p50 / maxMs) * (panelW - 60);
    const w99 = (r.p99 / maxMs) * (panelW - 60);
    out.push(
      `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${esc(r.label)}</text>`,
      `<rect x="${x1}" y="${y + 4}" width="${w1.toFixed(1)}" height="16" fill="#4daf4a"/>`,
      `<text x="${(x1 + w1 + 4).toFixed(1)}" y="${y + 16}">${fmt(r.rps)}</text>`,
      `<rect x="${x2}" y="${y + 3}" width="${w99.toFixed(1)}" height="9" fill="#e34a33"/>`,
      `<rect x="${x2}" y="${y + 13}" width="${w50.toFixed(1)}" height="9" fill="#2b8cbe"/>`,
      `<text x="${(x2 + Math.max(w99, w50) + 4).toFixed(1)}" y="${y + 16}">${fmt(r.p50)} / ${fmt(r.p99)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
