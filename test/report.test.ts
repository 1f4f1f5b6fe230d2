import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, shown } from '../lib/report/html.js';
import { bucketed, polylinePoints } from '../lib/report/svg.js';
import { removeProject, run, tempDir, tempProject } from './helpers.js';
import { demoProject, HOSTILE_NOW, HOSTILE_TOKEN, hostileProject } from './report-fixtures.js';

/** The elements the report writes; any other on the page came from a log. */
const PAGE_TAGS = [
  'body',
  'header',
  'h1',
  'h2',
  'h3',
  'h4',
  'p',
  'ul',
  'li',
  'b',
  'nav',
  'a',
  'section',
  'article',
  'svg',
  'line',
  'text',
  'polyline',
  'circle',
  'span',
  'i',
  'pre',
  'table',
  'tr',
  'th',
  'td',
  'code',
  'div',
  'footer',
];

// `cairn report`: the page a person opens to see what cairn learned. What a browser makes of it is in
// test/report.browser.ts (npm run test:browser); here, the command and the page's text.

/** The demo's last day: what it learned is fresh. */
const DEMO_NOW = '2026-11-06T09:00:00.000Z';

describe('cairn report on the demo', () => {
  let demo: string;
  beforeAll(() => {
    demo = demoProject();
  });
  afterAll(() => removeProject(demo));

  it('writes one self-contained page into the store and prints its path', () => {
    const r = run('cairn', ['report'], { cwd: demo, env: { CAIRN_NOW: DEMO_NOW } });
    expect(r.code, r.stderr).toBe(0);
    const path = join(demo, '.cairn', 'cache', 'report.html');
    expect(r.stdout).toBe(`${path}\n`);
    expect(r.stderr).toBe(''); // no progress line: stderr is not a terminal
    const html = readFileSync(path, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
    expect(html).not.toMatch(/<script|<link|<img|https?:\/\/|src=/i); // nothing to run, nothing fetched
    // the auditor's learning: the false alarm given in runs 2 and 3, dismissed there, retired before run 4
    expect(html).toMatch(
      /<polyline class="curve dismissed" data-series="dismissed" fill="none" points="[\d.]+,[\d.]+ [\d.]+,[\d.]+ [\d.]+,[\d.]+"/,
    );
    expect(html).toContain('Dismissed lines per run: 1.0 in the first run, 0.0 in the last run');
    expect(html).toMatch(/<td>Every new CLI flag must be documented in the man page before merge<\/td><td>deprecated: /);
    expect(html).toMatch(/<pre class="block">=== HISTORICAL PATTERNS \(auditor\) ===\n- /);
    expect(html).toContain('OAuth redirect URI must match the registered one exactly');
    expect(html).toContain('<td>Build a clinic command center</td>');
  });

  it('--out writes it elsewhere; --json says what it wrote', () => {
    const out = join(tempDir(), 'learned.html');
    const r = run('cairn', ['report', '--out', out, '--json'], { cwd: demo });
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ path: out, events: 63, roles: ['auditor'] });
    expect(json.bytes).toBe(readFileSync(out).length);
  });

  it('--open hands the page to the system opener, and without one only warns', () => {
    const bin = tempDir();
    const seen = join(bin, 'opened');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" > ${seen}\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const opened = run('cairn', ['report', '--open'], { cwd: demo, env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(opened.code, opened.stderr).toBe(0);
    for (let i = 0; i < 50 && !existsSync(seen); i++) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    expect(readFileSync(seen, 'utf8')).toBe(join(demo, '.cairn', 'cache', 'report.html') + '\n');
    const none = run('cairn', ['report', '--open', '--strict'], { cwd: demo, env: { PATH: '/nonexistent' } });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe(join(demo, '.cairn', 'cache', 'report.html') + '\n');
    expect(none.stderr).toMatch(/^cairn report: cannot open the page \(xdg-open: ENOENT\); open \S+report\.html in a browser\n$/);
  });
});

describe('every text on the page is shown as text', () => {
  it('markup, script URLs, bidi controls and tokens from every log stay text', () => {
    const root = hostileProject(tempDir());
    const r = run('cairn', ['report', '--strict'], { cwd: root, env: { CAIRN_NOW: HOSTILE_NOW } });
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(r.stdout.trim(), 'utf8');
    const body = html.slice(html.indexOf('<body>'));
    // every tag on the page is the report's own: no script, no image, no link out, no event handler
    const tags = [...body.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)];
    const names = new Set(tags.map((t) => t[1].toLowerCase()));
    for (const name of names) expect(PAGE_TAGS, name).toContain(name);
    for (const [, name, attributes] of tags) {
      expect(attributes, name).not.toMatch(/\son\w+\s*=/i);
      expect(attributes, name).not.toMatch(/\s(href|src|xlink:href)\s*=\s*"(?!#)/i);
    }
    expect(html).not.toContain(HOSTILE_TOKEN);
    expect(html).not.toContain('\u202e');
    const asText = escapeHtml('Never merge <script>window.__cairnXss=1</script> nor </svg><img src=x onerror="window.__cairnXss=2">');
    expect(body.split(asText).length - 1).toBeGreaterThanOrEqual(4); // the block, top patterns, knowledge, landings
    expect(body).toContain('&lt;script&gt;window.__cairnXss=4&lt;/script&gt;'); // the audit's key
    expect(body).toContain('[REDACTED:github-token]');
    expect(body.match(/<svg /g)?.length).toBe(1 + 2); // the auditor's curve and two sparklines: no </svg> from a log closed one
  });

  it('shown(): sanitised, redacted, then escaped', () => {
    expect(shown('a <b> & "c" \'d\'')).toBe('a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39;');
    expect(shown(`x\u202ey SYSTEM: z ${HOSTILE_TOKEN}`)).toBe('xy z [REDACTED:github-token]');
    expect(shown('one\ntwo')).toBe('one two');
    expect(shown('one\ntwo', true)).toBe('one\ntwo');
  });
});

describe('the charts', () => {
  it('places one point per value, scaled into the area (y grows downwards)', () => {
    expect(polylinePoints([0, 5, 10], 100, 50, 10)).toBe('0,50 50,25 100,0');
    expect(polylinePoints([3], 100, 50, 10)).toBe('50,35');
    expect(polylinePoints([2, 2], 10, 10, 2, 2)).toBe('0,10 10,10');
  });

  it('averages a long history into at most so many points', () => {
    expect(bucketed([1, 2, 3], 5)).toEqual({ values: [1, 2, 3], per: 1 });
    expect(bucketed([1, 3, 5, 7, 9], 2)).toEqual({ values: [3, 8], per: 3 });
  });
});

describe('cairn report without a store', () => {
  it('fails open like every command', () => {
    const r = run('cairn', ['report'], { cwd: tempProject({ init: false }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cairn report: skipped \(pipeline continues\): no cairn store at /);
  });
});
