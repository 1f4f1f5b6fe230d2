import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, removeProject, run, tempDir } from './helpers.js';
import { demoProject, HOSTILE_NOW, HOSTILE_TOKEN, hostileProject, largeProject } from './report-fixtures.js';

// `cairn report` in a real browser: headless Chromium (Debian's chromium package) opens the page
// from the file, as a person would, and the test reads what it shows. Screenshots are kept in
// test-artifacts/ (not committed).

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = join(REPO, 'test-artifacts');

let browser: BrowserContext;
let profile: string;
beforeAll(async () => {
  profile = mkdtempSync(join(tmpdir(), 'cairn-chromium-')); // a fresh --user-data-dir
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    viewport: { width: 1100, height: 900 },
  });
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
});

/** Open a page from its file; every console error, page error and request on the way is collected. */
async function open(path: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => r.url() !== `file://${path}` && requests.push(r.url()));
  await page.goto(`file://${path}`, { waitUntil: 'load' });
  return { page, errors, requests };
}

/** Each chart's lines: their series and the number of points they draw. */
const curves = (page: Page) =>
  page.$$eval('svg.chart polyline.curve', (lines) =>
    lines.map((l) => ({
      series: l.getAttribute('data-series'),
      points: (l as SVGPolylineElement).points.numberOfItems,
    })),
  );

function report(cwd: string, now?: string): string {
  const out = join(tempDir(), 'report.html');
  const r = run('cairn', ['report', '--out', out, '--strict'], { cwd, env: now ? { CAIRN_NOW: now } : {} });
  expect(r.code, r.stderr).toBe(0);
  return out;
}

describe('cairn report in a browser', () => {
  it("the demo's page renders without errors, its curves have a point per run, and nothing is fetched", async () => {
    const demo = demoProject();
    try {
      const { page, errors, requests } = await open(report(demo, '2026-11-06T09:00:00.000Z'));
      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
      expect(await page.textContent('h1')).toBe('What cairn learned');
      expect(await curves(page)).toEqual([
        { series: 'given', points: 3 },
        { series: 'kept', points: 3 },
        { series: 'dismissed', points: 3 },
      ]);
      expect(await page.textContent('.chart text:last-of-type')).toBe('run 3');
      const box = await page.locator('svg.chart').boundingBox();
      expect(box!.width).toBeGreaterThan(300); // drawn, not collapsed
      expect(await page.locator('pre.block').textContent()).toMatch(/^=== HISTORICAL PATTERNS \(auditor\) ===\n- /);
      expect(await page.locator('#top svg.spark').count()).toBe((await page.locator('#top tr').count()) - 1);
      await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    } finally {
      removeProject(demo);
    }
  });

  it('text from the logs stays text: no script runs, no link leads anywhere, no bidi control, no token', async () => {
    const { page, errors } = await open(report(hostileProject(tempDir()), HOSTILE_NOW));
    expect(errors).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { __cairnXss?: number }).__cairnXss)).toBeUndefined();
    expect(await page.locator('script, img, iframe, object, embed').count()).toBe(0);
    const hrefs = await page.$$eval('[href]', (els) => els.map((e) => e.getAttribute('href')));
    expect(hrefs.every((h) => h!.startsWith('#'))).toBe(true);
    const text = (await page.textContent('body'))!;
    expect(text).toContain('Never merge <script>window.__cairnXss=1</script> nor </svg><img src=x onerror="window.__cairnXss=2">');
    expect(text).toContain('javascript:alert(1)'); // as text
    expect(text).not.toContain('\u202e');
    expect(text).not.toContain(HOSTILE_TOKEN);
    expect(await page.locator('svg').count()).toBe(3); // the curve and two sparklines, none closed early
    expect((await curves(page)).map((c) => c.points)).toEqual([2, 2, 2]);
    await page.screenshot({ path: join(ARTIFACTS, 'report-hostile.png'), fullPage: true });
  });

  it('a large store: a long history is drawn as at most 120 points, each the mean of its runs', async () => {
    const dir = await largeProject(5_000);
    try {
      const rebuilt = run('cairn', ['rebuild', '--project', 'benchproject0001'], { cwd: dir });
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
      const out = join(tempDir(), 'report.html');
      const r = run('cairn', ['report', '--out', out, '--project', 'benchproject0001', '--strict'], {
        cwd: dir,
        env: { CAIRN_NOW: '2026-04-20T10:00:00.000Z' },
      });
      expect(r.code, r.stderr).toBe(0);
      const { page, errors } = await open(out);
      expect(errors).toEqual([]);
      const lines = await curves(page);
      expect(lines.length).toBeGreaterThanOrEqual(3);
      for (const l of lines) expect(l.points).toBeGreaterThan(1);
      for (const l of lines) expect(l.points).toBeLessThanOrEqual(120);
      expect(await page.locator('.legend').first().textContent()).toMatch(/each point: the mean of \d+ runs/);
      await page.screenshot({ path: join(ARTIFACTS, 'report-large.png') });
    } finally {
      removeProject(dir);
    }
  });
});
