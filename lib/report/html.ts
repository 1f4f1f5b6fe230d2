import { sanitizeUntrusted } from '../core/sanitize.js';
import { redactSecrets } from '../core/secrets.js';
import { BLOCK_FOOTER, blockHeader, shortId } from '../patterns/block.js';
import type { LeftReason, ReportData, RoleReport, TopPattern } from './data.js';
import { bucketed, lineChart, sparkline } from './svg.js';

// `cairn report`'s page: one self-contained HTML file — inline CSS and SVG, no script, no request
// to anywhere (its Content-Security-Policy forbids both) — that reads without JavaScript. Every text
// on it came from a log anyone with commit access may have written: it passes the one sanitiser and
// the one redactor (SPEC §4.6), then is escaped as HTML. Nothing from a log becomes a link.

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** A text from a store as the page shows it: sanitised, secrets redacted, escaped. */
export function shown(text: string, multiLine = false): string {
  return escapeHtml(redactSecrets(sanitizeUntrusted(String(text), { singleLine: !multiLine })).text);
}

const count = (n: number) => Math.round(n).toLocaleString('en');
/** The day of a time a log gave (anything else shows as nothing). */
const day = (iso: unknown) => (typeof iso === 'string' ? escapeHtml(iso.slice(0, 10)) : '');
const unixDay = (seconds: number) => {
  const t = new Date(seconds * 1000);
  return Number.isNaN(t.getTime()) ? '' : day(t.toISOString());
};
const POINTS = 120;

const REASONS: Record<LeftReason, string> = {
  deprecated: 'deprecated (by a person, or by cairn maintain)',
  obsolete: 'obsolete: validated before, dismissed since',
  dismissed: 'dismissed by validators',
  decayed: 'decayed: unused for weeks',
  outranked: 'outranked: still a candidate, below the budget',
};

const STYLE = `
:root { --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --bg: #fbfcfe; --kept: #1f8a4c;
  --dismissed: #c23a2b; --given: #8a93a6; --accent: #1f5fb5; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  background: var(--bg); }
header, section, footer { max-width: 980px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 28px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 17px; margin: 22px 0 6px; }
h4 { font-size: 14px; margin: 16px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
p.meta, .muted { color: var(--muted); }
nav a { color: var(--accent); margin-right: 14px; text-decoration: none; }
.facts { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0; padding: 0; list-style: none; }
.facts li { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.facts b { display: block; font-size: 20px; }
article.role { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 4px 18px 14px;
  margin: 14px 0; }
pre.block { white-space: pre-wrap; background: #f3f5f9; border-radius: 6px; padding: 10px 12px; font-size: 13px;
  margin: 0; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
td, th { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
svg.chart { width: 100%; height: auto; max-width: 760px; }
.chart .axis { stroke: var(--ink); stroke-width: 1; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .tick { font-size: 11px; fill: var(--muted); }
.curve { stroke-width: 2.5; stroke-linejoin: round; }
.curve.kept { stroke: var(--kept); }
.curve.dismissed { stroke: var(--dismissed); }
.curve.given { stroke: var(--given); stroke-dasharray: 4 3; stroke-width: 1.5; }
.spark .spark-line { stroke: var(--accent); stroke-width: 1.5; }
.spark .spark-end { fill: var(--accent); }
.legend { font-size: 13px; color: var(--muted); }
.legend span { margin-right: 14px; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 5px; }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 999px; padding: 1px 10px;
  margin: 0 6px 6px 0; font-size: 13px; background: #fff; }
.bars td.bar { width: 60%; }
.bars .fill { height: 10px; background: var(--accent); border-radius: 3px; }
ul.entries { padding-left: 18px; }
ul.entries li { margin: 4px 0; }
code { font-size: 13px; }
footer { margin: 40px auto 30px; color: var(--muted); font-size: 13px; }
`;

/** A table of rows of cells (already HTML); `classes` gives columns a class (`num`: right-aligned). */
function table(head: string[], rows: string[][], classes: Record<number, string> = {}, className = ''): string {
  const cell = (tag: string, i: number, html: string) => {
    const attribute = classes[i] ? ` class="${classes[i]}"` : '';
    return `<${tag}${attribute}>${html}</${tag}>`;
  };
  return [
    `<table${className ? ` class="${className}"` : ''}>`,
    head.length ? `<tr>${head.map((h, i) => cell('th', i, h)).join('')}</tr>` : '',
    ...rows.map((r) => `<tr>${r.map((c, i) => cell('td', i, c)).join('')}</tr>`),
    '</table>',
  ].join('\n');
}

const chip = (html: string) => `<span class="chip">${html}</span>`;
const muted = (html: string) => `<p class="muted">${html}</p>`;

export function renderReport(d: ReportData): string {
  const states = Object.entries(d.patternsByState).sort((a, b) => b[1] - a[1]);
  const patterns = states.reduce((n, [, c]) => n + c, 0);
  const facts = [
    [count(d.events), 'events in the log'],
    [count(patterns), `patterns (${states.map(([s, n]) => `${count(n)} ${shown(s)}`).join(', ') || 'none yet'})`],
    [count(d.knowledge.stats.total), `knowledge entries (${count(d.knowledge.stats.archived)} archived)`],
    [count(d.landings.length), 'landing patterns'],
  ];
  const nav = [
    ['roles', 'Reviewing roles'],
    ['top', 'Top patterns'],
    ['knowledge', 'Knowledge'],
    ['landings', 'Landings'],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>What cairn learned — ${shown(d.project)}</title>
<style>${STYLE}</style></head>
<body>
<header><h1>What cairn learned</h1>
<p class="meta">project ${shown(d.project)} · ${day(d.generatedAt)} ${escapeHtml(d.generatedAt.slice(11, 16))} UTC</p>
<ul class="facts">${facts.map(([n, what]) => `<li><b>${n}</b>${what}</li>`).join('')}</ul>
<nav>${nav.map(([id, title]) => `<a href="#${id}">${title}</a>`).join('')}</nav>
</header>
<section id="roles"><h2>Reviewing roles</h2>
<p class="muted">Before each run a reviewing role is given its best patterns; the validator then keeps or dismisses
what it raised. A memory that learns gives fewer lines that get dismissed, run after run.</p>
${d.roles.length ? d.roles.map(roleSection).join('\n') : '<p>No reviewing role has patterns yet.</p>'}
</section>
<section id="top"><h2>Top patterns</h2>
${topTable(d.top)}
</section>
<section id="knowledge"><h2>Knowledge</h2>
${knowledgeSection(d)}
</section>
<section id="landings"><h2>Landing patterns</h2>
${landingSection(d)}
</section>
<footer>Written by <code>cairn report</code> from <code>.cairn/</code>. Every text on this page comes from the
project's logs and is shown as text.</footer>
</body></html>
`;
}

function roleSection(r: RoleReport): string {
  const role = shown(r.role);
  const reasons = (Object.entries(r.leftByReason) as [LeftReason, number][]).filter(([, n]) => n > 0);
  const leftRows = r.left.map((l) => [shown(l.pattern.text), `${l.reason}: ${shown(l.detail)}`, day(l.lastInjected)]);
  const left = r.leftTotal
    ? [
        `<p>${reasons.map(([why, n]) => chip(`${count(n)} ${REASONS[why]}`)).join('')}</p>`,
        table(['pattern', 'why', 'last given'], leftRows, { 2: 'num' }),
        r.leftTotal > r.left.length ? muted(`and ${count(r.leftTotal - r.left.length)} more.`) : '',
      ].join('\n')
    : muted('Nothing has left the block.');
  const empty = muted('Empty: none passes the cut.');
  const block = r.block ? `<pre class="block">${blockText(r.block, r.role)}</pre>` : empty;
  return `<article class="role" id="role-${escapeHtml(r.role.replace(/[^a-z0-9-]/gi, '-'))}"><h3>${role}</h3>
${r.runs.length ? curve(r, role) : muted('Not given a block in any run yet.')}
<h4>The block it gets now</h4>
${block}
<h4>Patterns that left the block (${count(r.leftTotal)})</h4>
${left}
</article>`;
}

/** Lines given, kept and dismissed over the runs in which the role was given a block, and the trend in words. */
function curve(r: RoleReport, role: string): string {
  const pick = (k: 'injected' | 'dismissed' | 'kept') =>
    bucketed(
      r.runs.map((p) => p[k]),
      POINTS,
    );
  const given = pick('injected');
  const series = [
    { name: 'given', className: 'given', values: given.values },
    { name: 'kept', className: 'kept', values: pick('kept').values },
    { name: 'dismissed', className: 'dismissed', values: pick('dismissed').values },
  ];
  const label = `Lines given to ${role}, kept and dismissed, over ${count(r.runs.length)} runs`;
  const key = (colour: string, text: string) => `<span><i style="background:var(--${colour})"></i>${text}</span>`;
  const legend = [
    key('given', 'lines given'),
    key('kept', 'kept by the validator'),
    key('dismissed', 'dismissed'),
    '<span>runs in which it was given a block</span>',
    given.per > 1 ? `<span>each point: the mean of ${given.per} runs</span>` : '',
  ];
  return `${lineChart(series, label, 'run 1', `run ${count(r.runs.length)}`)}
<p class="legend">${legend.join('')}</p>
<p>${trend(r)}</p>`;
}

/** A block as format-patterns prints it: its frame is cairn's own (the sanitiser would take it for a forged one). */
function blockText(block: string, role: string): string {
  const lines = block.split('\n');
  const framed = lines.length >= 2 && lines[0] === blockHeader(role.toLowerCase()) && lines.at(-1) === BLOCK_FOOTER;
  if (!framed) return shown(block, true);
  const inner = shown(lines.slice(1, -1).join('\n'), true);
  return [`=== HISTORICAL PATTERNS (${shown(role)}) ===`, inner, BLOCK_FOOTER].join('\n');
}

/** Dismissed lines per run early on against lately: the learning in one sentence. */
function trend(r: RoleReport): string {
  if (r.runs.length < 2) {
    const [{ dismissed, injected, kept }] = r.runs;
    return `One run so far: ${count(dismissed)} of ${count(injected)} lines dismissed, ${count(kept)} kept.`;
  }
  const n = Math.max(1, Math.min(10, Math.floor(r.runs.length / 3)));
  const mean = (points: typeof r.runs, k: 'dismissed' | 'kept') => {
    const sum = points.reduce((s, p) => s + p[k], 0);
    return (sum / points.length).toFixed(1);
  };
  const first = r.runs.slice(0, n);
  const last = r.runs.slice(-n);
  const runs = n > 1 ? `${n} runs` : 'run';
  const dismissed = `${mean(first, 'dismissed')} in the first ${runs}, ${mean(last, 'dismissed')} in the last ${runs}`;
  return `Dismissed lines per run: ${dismissed}; kept: ${mean(first, 'kept')} → ${mean(last, 'kept')}.`;
}

function topTable(top: TopPattern[]): string {
  if (!top.length) return muted('No patterns yet.');
  const rows = top.map((t) => {
    const p = t.pattern;
    const id = shown(shortId(p.id));
    const net = t.evidence[t.evidence.length - 1].toFixed(1);
    const label = `evidence of ${id}: ${t.evidence.length - 1} tested events, net ${net}`;
    const record = [shown(t.record), t.score.toFixed(2), shown(p.lifecycle)];
    return [`<code>${id}</code>`, shown(p.role), shown(p.text), ...record, sparkline(t.evidence, label)];
  });
  return table(['id', 'role', 'pattern', 'record', 'rank', 'state', 'evidence over time'], rows, { 4: 'num' });
}

function bars(items: [string, number][]): string {
  const max = Math.max(1, ...items.map(([, n]) => n));
  const bar = (n: number) => `<div class="fill" style="width:${((100 * n) / max).toFixed(1)}%"></div>`;
  return table(
    [],
    items.map(([name, n]) => [shown(name), count(n), bar(n)]),
    { 1: 'num', 2: 'bar' },
    'bars',
  );
}

function knowledgeSection(d: ReportData): string {
  const { stats, newest, audit } = d.knowledge;
  if (stats.total === 0 && !audit.summary) return muted('No knowledge entries yet.');
  const byType = Object.entries(stats.byType).sort((a, b) => b[1] - a[1]);
  const tags = stats.topTags.map((t) => [t.tag, t.count] as [string, number]);
  const entries = newest.map((e) => {
    const meta = `${e.bead ? `· ${shown(e.bead)} ` : ''}· ${unixDay(e.ts)}`;
    return `<li><b>${shown(e.type.toUpperCase())}</b> ${shown(e.content)} <span class="muted">${meta}</span></li>`;
  });
  return `<h3>By type</h3>${bars(byType)}
<h3>Top tags</h3>${tags.length ? bars(tags) : muted('None.')}
<h3>Newest entries</h3><ul class="entries">${entries.join('\n')}</ul>
<h3>What the sanitiser removed</h3>${auditPart(d.knowledge.audit)}`;
}

function auditPart(audit: ReportData['knowledge']['audit']): string {
  if (!audit.summary) return muted('<code>cairn sanitize</code> has not run here yet.');
  const actions = Object.entries(audit.byAction).sort((a, b) => b[1] - a[1]);
  const { active, read } = audit.summary;
  const when = unixDay(audit.ts ?? 0);
  const kept = `<p>The last <code>cairn sanitize</code> (${when}) kept ${count(active)} of ${count(read)} entries.</p>`;
  if (!actions.length) return `${kept}\n${muted('It removed nothing.')}`;
  const what = (action: string) => shown(action.replace(/_/g, ' '));
  const entry = (r: (typeof audit.recent)[number]) => shown(r.key ?? (r.line !== undefined ? `line ${r.line}` : ''));
  const rows = audit.recent.map((r) => [entry(r), what(r.action), shown(r.reason ?? '')]);
  const chips = `<p>${actions.map(([a, n]) => chip(`${count(n)} ${what(a)}`)).join('')}</p>`;
  return [kept, chips, table(['entry', 'what', 'why'], rows)].join('\n');
}

function landingSection(d: ReportData): string {
  if (!d.landings.length) return muted('None yet: they are kept from the reports of successful landings.');
  const rows = d.landings.map((l) => [
    shown(l.title),
    shown(l.tags.join(', ')),
    `${shown(l.examplePaths.slice(0, 4).join(', '))}${l.examplePaths.length > 4 ? ', …' : ''}`,
    shown(l.commands.slice(0, 3).join('; ')),
    day(l.updatedAt),
  ]);
  return table(['work', 'tags', 'files', 'validated by', 'updated'], rows, { 4: 'num' });
}
