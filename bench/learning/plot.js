// The learning curves as one PNG: stacked panels sharing the run axis.

import { Canvas } from './png.js';

export const COLORS = {
  blue: [31, 97, 181],
  red: [200, 50, 40],
  orange: [230, 140, 20],
  purple: [130, 70, 170],
  green: [40, 150, 70],
  grey: [150, 150, 150],
  light: [228, 228, 228],
  ink: [30, 30, 30],
};

const WIDTH = 1000;
const PANEL_HEIGHT = 250;
const LEFT = 70;
const RIGHT = 240; // room for the legend
const TOP = 40;
const GAP = 60;

/**
 * panels: [{title, yMax, yTicks: [[value, label]], series: [{label, color, points: [[run, y]], dash}],
 *           rules: [{y?, x?, color, label}]}], all over runs 1…runs.
 */
export function plotPanels(title, runs, panels) {
  const height = TOP + panels.length * (PANEL_HEIGHT + GAP);
  const c = new Canvas(WIDTH, height);
  c.text(LEFT, 12, title, COLORS.ink, 3);
  panels.forEach((panel, i) => drawPanel(c, panel, runs, TOP + i * (PANEL_HEIGHT + GAP) + 10));
  return c.png();
}

function drawPanel(c, panel, runs, top) {
  const w = WIDTH - LEFT - RIGHT;
  const h = PANEL_HEIGHT - 30;
  const px = (run) => LEFT + ((run - 1) / Math.max(1, runs - 1)) * w;
  const py = (y) => top + 20 + h - (Math.min(y, panel.yMax) / panel.yMax) * h;
  c.text(LEFT, top, panel.title, COLORS.ink, 2);
  for (const [value, label] of panel.yTicks) {
    c.line(LEFT, py(value), LEFT + w, py(value), COLORS.light);
    c.text(LEFT - 8 - label.length * 8, py(value) - 5, label, COLORS.ink, 2);
  }
  const step = runs > 20 ? 5 : 1;
  for (let run = 1; run <= runs; run++) {
    if (run !== 1 && run % step !== 0) continue;
    c.line(px(run), py(0), px(run), py(0) + 4, COLORS.ink);
    c.text(px(run) - String(run).length * 4, py(0) + 8, String(run), COLORS.ink, 2);
  }
  c.text(LEFT + w - 24, py(0) + 22, 'RUN', COLORS.ink, 2);
  c.line(LEFT, py(0), LEFT + w, py(0), COLORS.ink);
  c.line(LEFT, py(0), LEFT, py(panel.yMax), COLORS.ink);
  for (const rule of panel.rules ?? []) {
    if (rule.y !== undefined) c.line(LEFT, py(rule.y), LEFT + w, py(rule.y), rule.color, 2, 6);
    else c.line(px(rule.x), py(0), px(rule.x), py(panel.yMax), rule.color, 2, 6);
  }
  for (const s of panel.series) {
    const pts = s.points.filter(([, y]) => y !== null);
    for (let i = 1; i < pts.length; i++)
      c.line(px(pts[i - 1][0]), py(pts[i - 1][1]), px(pts[i][0]), py(pts[i][1]), s.color, 3, s.dash ?? 0);
    for (const [x, y] of pts) c.rect(px(x) - 2, py(y) - 2, 5, 5, s.color);
  }
  let ly = top + 24;
  for (const item of [...panel.series, ...(panel.rules ?? [])]) {
    c.line(LEFT + w + 16, ly + 5, LEFT + w + 40, ly + 5, item.color, 3, item.dash ?? (item.points ? 0 : 4));
    c.text(LEFT + w + 48, ly, item.label, COLORS.ink, 2);
    ly += 20;
  }
}
