import { parseJsonLine, readLines } from '../io/jsonl.js';
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

/** Does this event touch the pattern (directly, or in an injection or outcome list)? */
export function mentionsPattern(e: CairnEvent, id: string): boolean {
  const rec = e as unknown as Record<string, unknown>;
  if (rec.pattern === id) return true;
  const list = rec.patterns;
  return Array.isArray(list) && list.some((p) => p === id || (p && typeof p === 'object' && (p as { pattern?: unknown }).pattern === id));
}

export function readEvents(path: string, filter: EventFilter, warn: (m: string) => void): CairnEvent[] {
  const out: CairnEvent[] = [];
  for (const line of readLines(path)) {
    if (!line.text.trim()) continue;
    const parsed = parseJsonLine(line.text);
    const problem = parsed.ok ? envelopeProblem(parsed.value) : parsed.reason;
    if (problem || !parsed.ok) {
      warn(`events.jsonl: skipped the line at byte ${line.offset}: ${problem}`);
      continue;
    }
    const e = parsed.value as unknown as CairnEvent;
    if (e.project !== filter.project) continue;
    if (filter.type && e.type !== filter.type && !e.type.startsWith(filter.type + '.')) continue;
    if (filter.since !== undefined && Date.parse(e.ts) < filter.since) continue;
    if (filter.pattern && !mentionsPattern(e, filter.pattern)) continue;
    out.push(e);
  }
  return out.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : 1));
}

/** `--since` as an ISO date or a relative age (`7d`, `12h`, `30m`). */
export function parseSince(text: string, now: number): number {
  const rel = /^(\d+)\s*([dhm])$/i.exec(text.trim());
  if (rel) return now - Number(rel[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[rel[2].toLowerCase() as 'd' | 'h' | 'm'];
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new CairnError('usage', `--since takes a date or an age like 7d, got '${text}'`);
  return t;
}

/** One readable line: time, type, and the payload fields that matter; sanitised, for a terminal (issue 7). */
export function describeEvent(e: CairnEvent): string {
  const { v: _v, id: _id, ts, type, project: _p, ...payload } = e as unknown as Record<string, unknown> & CairnEvent;
  // Each value is sanitised before it is quoted: quoting first would hide a marker behind an escaped line break.
  const clean = (v: unknown): unknown =>
    typeof v === 'string' ? sanitizeUntrusted(v, { singleLine: true }) : Array.isArray(v) ? v.map(clean) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clean(x)])) : v;
  const parts = Object.entries(payload)
    .filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, raw]) => {
      const v = clean(raw);
      return `${k}=${typeof v === 'string' ? (v.length > 80 ? JSON.stringify(v.slice(0, 77) + '...') : /\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`;
    });
  return sanitizeUntrusted(`${ts} ${type} ${parts.join(' ')}`, { singleLine: true });
}

/** Where an event happened: `LED-7/r1`, `LED-7`, or '' (unscoped). */
function scopeOf(e: { issue?: string | null; run?: string | null }): string {
  return [e.issue, e.run].filter((x) => x).join('/');
}

const quote = (text: string, max = 80) => `'${text.length > max ? text.slice(0, max - 1).trimEnd() + ' …' : text}'`;

/**
 * One line of a pattern's history for `cairn explain`, in words: what happened to it, where, and
 * through which finding (SPEC §3.9.1: "dismissed in LED-7/r1 via finding A2: 'The export …'").
 */
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
      what = `applied${inScope} by finding ${e.finding}: ${quote(e.summary)} (${{ explicit: 'it cites the id', text: 'by its words', embedding: 'by its meaning (embeddings)', self: 'the finding is this pattern' }[e.match]})`;
      break;
    case 'pattern.injected':
      what = `injected into ${e.role}${where ? ` for ${where}` : ''}`;
      break;
    case 'pattern.ignored':
      what = `dismissed${inScope} via ${finding(e.finding)}${e.reason ? `, reached through the validator's reason ${quote(e.reason)}` : ''} (weight ${e.weight}${e.retract ? ', its sighting taken back' : ''})`;
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
