import { closeSync, readSync, statSync } from 'node:fs';
import { parseJsonLine, readLines } from '../io/jsonl.js';
import { openRegularFile } from '../io/read.js';
import { prefixIntact, windowHashes } from '../store/follower.js';
import type { Progress } from '../core/progress.js';
import type { Deadline } from '../core/deadline.js';
import { envelopeProblem, type CairnEvent } from './types.js';
import { CairnError } from '../core/errors.js';
import { sanitizeUntrusted } from '../core/sanitize.js';

// Reading the event log for people: filters, a pattern's history, one line per event.

export interface EventFilter {
  project: string;
  type?: string;
  since?: number;
  pattern?: string;
}

function mentionsPattern(e: CairnEvent, id: string): boolean {
  const rec = e as unknown as Record<string, unknown>;
  if (rec.pattern === id) return true;
  const list = rec.patterns;
  return Array.isArray(list) && list.some((p) => p === id || (p && typeof p === 'object' && (p as { pattern?: unknown }).pattern === id));
}

function eventOf(text: string): { event: CairnEvent } | { problem: string } {
  const parsed = parseJsonLine(text);
  const problem = parsed.ok ? envelopeProblem(parsed.value) : parsed.reason;
  if (problem || !parsed.ok) return { problem: problem ?? 'unreadable' };
  return { event: parsed.value as unknown as CairnEvent };
}

/** In file order; a line failing the envelope checks is reported and skipped. */
export function* logEvents(path: string, warn: (m: string) => void, progress?: Progress): Generator<CairnEvent> {
  const size = progress ? fileSize(path) : 0;
  let count = 0;
  for (const line of readLines(path)) {
    if (progress && ++count % 1024 === 0) progress(line.end, size);
    if (!line.text.trim()) continue;
    const read = eventOf(line.text);
    if ('problem' in read) warn(`events.jsonl: skipped the line at byte ${line.offset}: ${read.problem}`);
    else yield read.event;
  }
}

const byTsThenId = (a: CairnEvent, b: CairnEvent) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : 1);

export function readEvents(path: string, filter: EventFilter, warn: (m: string) => void): CairnEvent[] {
  const out: CairnEvent[] = [];
  for (const e of logEvents(path, warn)) {
    if (e.project !== filter.project) continue;
    if (filter.type && e.type !== filter.type && !e.type.startsWith(filter.type + '.')) continue;
    if (filter.since !== undefined && Date.parse(e.ts) < filter.since) continue;
    if (filter.pattern && !mentionsPattern(e, filter.pattern)) continue;
    out.push(e);
  }
  return out.sort(byTsThenId);
}

/** As mentionsPattern reads them. */
function namedPatterns(value: Record<string, unknown>): Set<string> {
  const ids = new Set<string>();
  if (typeof value.pattern === 'string') ids.add(value.pattern);
  if (Array.isArray(value.patterns)) {
    for (const p of value.patterns) {
      if (typeof p === 'string') ids.add(p);
      else if (typeof (p as { pattern?: unknown } | null)?.pattern === 'string') {
        ids.add((p as { pattern: string }).pattern);
      }
    }
  }
  return ids;
}

/** Byte ranges of each pattern's lines, so `cairn mcp` explains pattern after pattern without rereading the log. */
export class PatternHistory {
  /** id → [start, end, start, end, …] */
  private readonly ranges = new Map<string, number[]>();
  private mark = { offset: 0, head: '', tail: '' };

  constructor(readonly path: string) {}

  events(project: string, id: string, warn: (m: string) => void, deadline: Deadline): CairnEvent[] {
    this.catchUp(deadline);
    const ranges = this.ranges.get(id) ?? [];
    const out: CairnEvent[] = [];
    const fd = openRegularFile(this.path);
    if (fd === undefined) return out;
    try {
      for (let i = 0; i < ranges.length; i += 2) {
        const buf = Buffer.alloc(ranges[i + 1] - ranges[i]);
        readSync(fd, buf, 0, buf.length, ranges[i]);
        const read = eventOf(buf.toString('utf8'));
        if ('problem' in read) warn(`events.jsonl: skipped the line at byte ${ranges[i]}: ${read.problem}`);
        else if (read.event.project === project && mentionsPattern(read.event, id)) out.push(read.event);
      }
    } finally {
      closeSync(fd);
    }
    return out.sort(byTsThenId);
  }

  /** A changed prefix (merge, rotation) starts over; past the deadline, what is indexed is kept. */
  private catchUp(deadline: Deadline): void {
    const size = fileSize(this.path);
    if (!prefixIntact(this.path, this.mark, size)) {
      this.ranges.clear();
      this.mark = { offset: 0, head: '', tail: '' };
    }
    if (size === this.mark.offset) return;
    let end = this.mark.offset;
    let count = 0;
    for (const line of readLines(this.path, this.mark.offset)) {
      if (++count % 1024 === 0 && deadline.passed()) break;
      end = line.end;
      const parsed = parseJsonLine(line.text);
      if (!parsed.ok) continue; // names no pattern (cairn events and explain report it)
      for (const id of namedPatterns(parsed.value)) {
        let list = this.ranges.get(id);
        if (!list) this.ranges.set(id, (list = []));
        list.push(line.offset, line.end);
      }
    }
    this.mark = { offset: end, ...windowHashes(this.path, end) };
    deadline.check('reading the history of patterns');
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** `--since` as an ISO date or a relative age (`7d`, `12h`, `30m`). */
export function parseSince(text: string, now: number): number {
  const rel = /^(\d+)\s*([dhm])$/i.exec(text.trim());
  if (rel) return now - Number(rel[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[rel[2].toLowerCase() as 'd' | 'h' | 'm'];
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new CairnError('usage', `--since takes a date or an age like 7d, got '${text}'`);
  return t;
}

/** Sanitised, for a terminal (SPEC §4.6). */
export function describeEvent(e: CairnEvent): string {
  const { v: _v, id: _id, ts, type, project: _p, ...payload } = e as unknown as Record<string, unknown> & CairnEvent;
  // sanitise before quoting: quoting first would hide a marker behind an escaped line break
  const clean = (v: unknown): unknown =>
    typeof v === 'string'
      ? sanitizeUntrusted(v, { singleLine: true })
      : Array.isArray(v)
        ? v.map(clean)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clean(x)]))
          : v;
  const parts = Object.entries(payload)
    .filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, raw]) => {
      const v = clean(raw);
      if (typeof v !== 'string') return `${k}=${JSON.stringify(v)}`;
      return `${k}=${v.length > 80 ? JSON.stringify(v.slice(0, 77) + '...') : /\s/.test(v) ? JSON.stringify(v) : v}`;
    });
  return sanitizeUntrusted(`${ts} ${type} ${parts.join(' ')}`, { singleLine: true });
}

/** `LED-7/r1`, `LED-7`, or '' */
function scopeOf(e: { issue?: string | null; run?: string | null }): string {
  return [e.issue, e.run].filter((x) => x).join('/');
}

const quote = (text: string, max = 80) => `'${text.length > max ? text.slice(0, max - 1).trimEnd() + ' …' : text}'`;

const LINK_MATCH_WORDS = {
  explicit: 'it cites the id',
  text: 'by its words',
  embedding: 'by its meaning (embeddings)',
  self: 'the finding is this pattern',
};

/** For `cairn explain` (SPEC §3.9.1). */
export function describePatternEvent(e: CairnEvent, history: CairnEvent[]): string {
  const where = scopeOf(e as { issue?: string | null; run?: string | null });
  const inScope = where ? ` in ${where}` : '';
  const finding = (id: string) => {
    const linked = history.find((x) => x.type === 'finding.linked' && x.finding === id && scopeOf(x) === where);
    return `finding ${id}${linked && linked.type === 'finding.linked' ? `: ${quote(linked.summary)}` : ''}`;
  };
  let what: string;
  switch (e.type) {
    case 'pattern.observed':
      what = e.echo ? `echoed${inScope} (it was injected: no new success)` : `seen${inScope}`;
      break;
    case 'finding.linked':
      what = `applied${inScope} by finding ${e.finding}: ${quote(e.summary)} ` + `(${LINK_MATCH_WORDS[e.match]})`;
      break;
    case 'pattern.injected':
      what = `injected into ${e.role}${where ? ` for ${where}` : ''}`;
      break;
    case 'pattern.ignored':
      what =
        `dismissed${inScope} via ${finding(e.finding)}` +
        (e.reason ? `, reached through the validator's reason ${quote(e.reason)}` : '') +
        ` (weight ${e.weight}${e.retract ? ', its sighting taken back' : ''})`;
      break;
    case 'pattern.regressed':
      what = `regressed${inScope}: validated before, dismissed via finding ${e.finding}`;
      break;
    case 'pattern.reinforced':
      what = e.finding ? `confirmed${inScope} via ${finding(e.finding)}` : `echoed in an evidence-backed PASS${inScope} (untested credit)`;
      break;
    case 'pattern.aged':
      what = `aged a day${inScope} (injected, not applied)`;
      break;
    case 'pattern.outcome':
      what = `graded ${e.result}${inScope} by the outcome`;
      break;
    case 'pattern.promoted':
      what = `promoted to active by ${e.by}: ${e.reason}`;
      break;
    case 'pattern.deprecated':
      what = `deprecated${e.auto ? ' (automatically)' : ''}: ${e.reason}`;
      break;
    default:
      return describeEvent(e);
  }
  return `${e.ts} ${what}`;
}
