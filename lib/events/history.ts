import { parseJsonLine, readLines } from '../io/jsonl.js';
import { envelopeProblem, type CairnEvent } from './types.js';
import { CairnError } from '../core/errors.js';

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

/** One readable line: time, type, and the payload fields that matter. */
export function describeEvent(e: CairnEvent): string {
  const { v: _v, id: _id, ts, type, project: _p, ...payload } = e as unknown as Record<string, unknown> & CairnEvent;
  const parts = Object.entries(payload)
    .filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? (v.length > 80 ? JSON.stringify(v.slice(0, 77) + '...') : /\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`);
  return `${ts} ${type} ${parts.join(' ')}`.trimEnd();
}
