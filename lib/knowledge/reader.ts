import { basename } from 'node:path';
import { jsonErrorPlace } from '../core/json.js';
import { readLines, type ParsedLine } from '../io/jsonl.js';
import { CURATION_STATUSES, keyOf, type CurationStatus, type KnowledgeEntry } from './entry.js';

// Tolerant (SPEC §4.1): what still is not an entry is reported and skipped, never removed.

/** Never throws. */
export function parseEntryLine(text: string): ParsedLine<KnowledgeEntry> {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, reason: 'empty line' };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
    if (typeof value === 'string') value = JSON.parse(value);
  } catch (err) {
    return { ok: false, reason: `invalid JSON (${jsonErrorPlace(trimmed, err)})` };
  }
  return toEntry(value);
}

/** Content and type required; the rest filled in or dropped. */
export function toEntry(value: unknown): ParsedLine<KnowledgeEntry> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' };
  const o = value as Record<string, unknown>;
  const content = typeof o.content === 'string' ? o.content : '';
  const type = typeof o.type === 'string' ? o.type.trim().toLowerCase() : '';
  if (!content.trim()) return { ok: false, reason: 'no content' };
  if (!type) return { ok: false, reason: 'no type' };
  const entry: KnowledgeEntry = {
    key: typeof o.key === 'string' && o.key.trim() ? o.key.trim() : keyOf(type, content),
    type,
    content,
    source: typeof o.source === 'string' ? o.source : '',
    tags: strings(o.tags),
    ts: seconds(o.ts),
    bead: typeof o.bead === 'string' ? o.bead : '',
  };
  if (typeof o.project === 'string' && o.project) entry.project = o.project;
  if (typeof o.status === 'string' && (CURATION_STATUSES as readonly string[]).includes(o.status))
    entry.status = o.status as CurationStatus;
  if (Array.isArray(o.supersedes)) entry.supersedes = strings(o.supersedes);
  if (typeof o.superseded_by === 'string') entry.superseded_by = o.superseded_by;
  if (Array.isArray(o.merged_from)) entry.merged_from = strings(o.merged_from);
  if (typeof o.review_source === 'string') entry.review_source = o.review_source;
  if (typeof o.review_reason === 'string') entry.review_reason = o.review_reason;
  return { ok: true, value: entry };
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** From seconds, milliseconds or an ISO date; 0 when unknown. */
export function seconds(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return Math.floor(v > 1e12 ? v / 1000 : v);
  if (typeof v === 'string') {
    if (/^\d+(\.\d+)?$/.test(v.trim())) return seconds(Number(v));
    const t = Date.parse(v);
    if (Number.isFinite(t)) return Math.floor(t / 1000);
  }
  return 0;
}

export interface ReadEntry {
  entry: KnowledgeEntry;
  offset: number;
  end: number;
  line: string;
}

export function* readEntries(path: string, warn: (message: string) => void, from = 0): Generator<ReadEntry> {
  for (const line of readLines(path, from)) {
    if (!line.text.trim()) continue;
    const parsed = parseEntryLine(line.text);
    if (parsed.ok) yield { entry: parsed.value, offset: line.offset, end: line.end, line: line.text };
    else warn(`${basename(path)}: skipped the line at byte ${line.offset}: ${parsed.reason}`);
  }
}
