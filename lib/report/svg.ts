// The report's charts as inline SVG: lines over runs and sparklines. Every number here is computed;
// every text that came from a store is escaped by the caller (lib/report/html.ts) before it reaches
// a label.

export interface Series {
  name: string;
  /** CSS class of the line (its colour comes from the page's style). */
  className: string;
  values: number[];
}

const f = (n: number) => (Math.round(n * 10) / 10).toString();

/** An `<svg>` start tag: an image of `width` × `height` user units, named by `label` (escaped by the caller). */
const svgOpen = (className: string, width: number, height: number, label: string) =>
  `<svg class="${className}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" ` + `role="img" aria-label="${label}">`;

/** `x1,y1 x2,y2 …` for values over an area `width` × `height` (y grows downwards), scaled to `max`. */
export function polylinePoints(values: number[], width: number, height: number, max: number, min = 0): string {
  const span = max - min || 1;
  const dx = values.length > 1 ? width / (values.length - 1) : 0;
  const x = (i: number) => (values.length > 1 ? i * dx : width / 2);
  return values.map((v, i) => `${f(x(i))},${f(height - ((v - min) / span) * height)}`).join(' ');
}

/**
 * A line chart of series over runs 1…n: axes, three y ticks, the first and last run on the x axis,
 * one polyline per series (`data-series` names it, `points` holds one pair per value). `label` is
 * already escaped.
 */
export function lineChart(series: Series[], label: string, xFirst: string, xLast: string): string {
  const width = 640;
  const height = 180;
  const left = 40;
  const top = 10;
  const plotW = width - left - 10;
  const plotH = height - top - 30;
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const ticks = [0, max / 2, max].map((v) => {
    const y = top + plotH - (v / max) * plotH;
    const grid = `<line class="grid" x1="${left}" x2="${left + plotW}" y1="${f(y)}" y2="${f(y)}"/>`;
    return `${grid}<text class="tick" x="${left - 6}" y="${f(y + 4)}" text-anchor="end">${f(v)}</text>`;
  });
  const lines = series.map((s) => {
    const points = polylinePoints(s.values, plotW, plotH, max);
    const place = `transform="translate(${left},${top})"`;
    return `<polyline class="curve ${s.className}" data-series="${s.name}" fill="none" points="${points}" ${place}/>`;
  });
  return [
    svgOpen('chart', width, height, label),
    ...ticks,
    `<line class="axis" x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}"/>`,
    `<line class="axis" x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}"/>`,
    `<text class="tick" x="${left}" y="${height - 8}">${xFirst}</text>`,
    `<text class="tick" x="${left + plotW}" y="${height - 8}" text-anchor="end">${xLast}</text>`,
    ...lines,
    '</svg>',
  ].join('');
}

/** A small line of a series without axes (its last value marked), for a table cell. */
export function sparkline(values: number[], label: string): string {
  const width = 120;
  const height = 24;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const points = polylinePoints(values, width - 4, height - 4, max, min);
  const last = points.split(' ').pop()!.split(',');
  return (
    svgOpen('spark', width, height, label) +
    `<polyline class="curve spark-line" fill="none" points="${points}" transform="translate(2,2)"/>` +
    `<circle class="spark-end" cx="${f(Number(last[0]) + 2)}" cy="${f(Number(last[1]) + 2)}" r="2"/></svg>`
  );
}

/**
 * At most `max` points: consecutive values averaged in buckets of equal size (a long history keeps
 * its shape). Returns the values and how many runs each point stands for.
 */
export function bucketed(values: number[], max: number): { values: number[]; per: number } {
  const per = Math.max(1, Math.ceil(values.length / max));
  if (per === 1) return { values, per };
  const out: number[] = [];
  for (let i = 0; i < values.length; i += per) {
    const bucket = values.slice(i, i + per);
    out.push(bucket.reduce((a, b) => a + b, 0) / bucket.length);
  }
  return { values: out, per };
}
