import { MAX_PATTERN_CHARS, MAX_SCOPE_CHARS, type Category } from '../events/types.js';
import type { Finding, Verdict } from './verdict.js';
import { collapseWhitespace, normaliseText, stripMarkdown } from '../core/text.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { citedIds, summaryWithoutCitations } from './link.js';

// Pattern candidates (SPEC §3.3 step 2): "Accumulated Patterns" items, and findings' summaries (SPEC §3.9.1).

export interface Extracted {
  text: string;
  category: Category;
  source: 'section' | 'finding';
  finding?: string;
}

export interface ExtractedFinding extends Extracted {
  source: 'finding';
  finding: string;
  /** Summary, location, fix hint and citations all feed the link (SPEC §3.9.1). */
  detail: Finding;
  /** A shorter one can still cite a pattern. */
  storable: boolean;
}

export interface Extraction {
  items: Extracted[];
  findings: ExtractedFinding[];
}

export const MIN_PATTERN_CHARS = 12;
/** One event line each. */
const MAX_FINDINGS = 50;
export { MAX_PATTERN_CHARS };

const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const BOLD_LINE = /^\s*(\*\*|__)(.+?)\1\s*:?\s*$/;
const SECTION_TITLE = /^(?:\d{1,2}[.)]\s*)?accumulated\s+patterns\b/i; // `## 4. Accumulated Patterns` too
const PLAIN_TITLE = /^\s*accumulated\s+patterns\s*:\s*$/i;
const ITEM = /^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/;
const FENCE = /^\s*(```|~~~)/;

function sectionTitle(line: string): string | undefined {
  const h = HEADING.exec(line);
  if (h) return h[1];
  const b = BOLD_LINE.exec(line);
  if (b) return b[2].replace(/:$/, '');
  return undefined;
}

/** Continuation lines joined. */
export function accumulatedPatternItems(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const items: string[] = [];
  let inSection = false;
  let inFence = false;
  let current: string[] | undefined;
  let blankSince = false;
  const flush = () => {
    if (current) items.push(current.join(' '));
    current = undefined;
  };
  for (const line of lines) {
    if (FENCE.test(line)) {
      inFence = !inFence;
      flush();
      continue;
    }
    if (inFence) continue;
    const title = sectionTitle(line);
    if (title !== undefined || PLAIN_TITLE.test(line)) {
      flush();
      inSection = title === undefined || SECTION_TITLE.test(title.trim());
      continue;
    }
    if (!inSection) continue;
    if (line.trim() === '') {
      blankSince = true;
      continue;
    }
    if (/^\s*<!--/.test(line)) {
      flush(); // a verdict comment or other markup ends the list
      inSection = false;
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      flush();
      current = [item[2]];
    } else if (current && (!blankSince || /^\s{2,}\S/.test(line))) {
      current.push(line.trim());
    } else {
      flush(); // prose between or after the items is not a pattern
    }
    blankSince = false;
  }
  flush();
  return items;
}

const EXPLICIT = /^(rule|causal|observation)\s*:\s*/i;
// both apostrophes: generated text often writes U+2019
const OBLIGATION = /\b(must|never|always|do not|don['’]t|dont|should|shouldn['’]t|required|requires?|avoid|forbidden)\b/i;
const CAUSE = /\b(because|caused by|causes|leads to|lead to|results in|result in|due to|therefore|so that)\b|->|→/i;

/** SPEC §3.3 step 3 */
export function classify(text: string): { category: Category; text: string } {
  const explicit = EXPLICIT.exec(text);
  if (explicit) return { category: explicit[1].toLowerCase() as Category, text: text.slice(explicit[0].length).trim() };
  if (OBLIGATION.test(text)) return { category: 'rule', text };
  if (CAUSE.test(text)) return { category: 'causal', text };
  return { category: 'observation', text };
}

// added by format-patterns: an agent copying an injected line copies them too
const TRACK_RECORD = /\s*\((?:score:\d+(?:\.\d+)?|\d+x validated|-?\d+ net, \d+x ignored)(?:, via:[\w.-]+)?\)\s*$/;
const SHORT_ID = /^\[p[0-9a-f]{4,15}\]\s*/i;

/** Sanitised (SPEC §4.6). */
export function cleanItem(raw: string): string {
  return sanitizeUntrusted(collapseWhitespace(stripMarkdown(raw)), { singleLine: true })
    .replace(SHORT_ID, '')
    .replace(TRACK_RECORD, '');
}

/** A finding repeating an item stays a finding, linked to the item's pattern. */
export function extractPatterns(text: string, verdict: Verdict | null): Extraction {
  const clean = (raw: string) => {
    const { category, text: body } = classify(cleanItem(raw));
    return body.length < MIN_PATTERN_CHARS || body.length > MAX_PATTERN_CHARS ? undefined : { category, text: body };
  };
  const items: Extracted[] = [];
  const seen = new Set<string>();
  for (const raw of accumulatedPatternItems(text)) {
    const item = clean(raw);
    if (!item || seen.has(normaliseText(item.text))) continue;
    seen.add(normaliseText(item.text));
    items.push({ ...item, source: 'section' });
  }
  const findings: ExtractedFinding[] = [];
  const seenIds = new Set<string>();
  for (const f of verdict?.issues ?? []) {
    if (seenIds.has(f.id) || f.id.length > MAX_SCOPE_CHARS || findings.length === MAX_FINDINGS) continue;
    const summary = clean(summaryWithoutCitations(f.summary ?? ''));
    if (!summary && citedIds(f).length === 0) continue;
    seenIds.add(f.id);
    const text = summary?.text ?? cleanItem(summaryWithoutCitations(f.summary ?? '')).slice(0, MAX_PATTERN_CHARS);
    findings.push({
      text,
      category: summary?.category ?? 'observation',
      source: 'finding',
      finding: f.id,
      detail: f,
      storable: !!summary,
    });
  }
  return { items, findings };
}
