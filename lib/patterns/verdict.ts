import { jsonErrorPlace } from '../core/json.js';

// Verdict-json blocks (SPEC §3.6). Untrusted text: the scan is linear, nothing throws, an ignored block is reported.

export interface Finding {
  id: string;
  severity?: string;
  summary?: string;
  location?: string;
  root_cause?: string;
  fix_hint?: string;
  /** Ids or prefixes (SPEC §3.9.1). */
  patterns?: string[];
}

export interface Verdict {
  verdict: 'PASS' | 'FAIL';
  effective: 'PASS' | 'FAIL'; // FAIL with an empty must_fix counts as PASS
  issues: Finding[];
  must_fix: string[];
  false_positives: string[];
}

export interface VerdictParse {
  verdict: Verdict | null;
  problems: string[];
}

const MARKER = 'verdict-json';

// a bounded look-back keeps the scan linear on texts full of markers
const OPENER_WINDOW = 200;

const MAX_PROBLEMS = 10;

const COMMENT_PREFIX = /^\s*(?:[A-Za-z0-9_-]+:)?$/;
const FENCE_PREFIX = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/;

const TEXT_FIELDS = ['severity', 'summary', 'location', 'root_cause', 'fix_hint'] as const;

interface FoundBlock {
  line: number;
  body: string | null; // null: never closed
  span: [number, number]; // opener to closer, or to the end
}

export function parseVerdict(text: string): VerdictParse {
  if (typeof text !== 'string') return { verdict: null, problems: [] };
  let verdict: Verdict | null = null;
  const problems: string[] = [];
  for (const block of findBlocks(text)) {
    const result = block.body === null ? 'is never closed' : readBlock(block.body);
    if (typeof result === 'string') problems.push(`verdict-json block at line ${block.line} ${result}.`);
    else verdict = result; // the last valid block wins
  }
  return { verdict, problems: capped(problems) };
}

export function findingById(v: Verdict | null, id: string): Finding | undefined {
  if (!v || typeof id !== 'string') return undefined;
  const wanted = id.trim().toLowerCase();
  if (wanted === '') return undefined;
  return v.issues.find((finding) => finding.id.toLowerCase() === wanted);
}

/** The prose, where a validator says why (SPEC §3.9.2). */
export function withoutVerdictBlocks(text: string): string {
  let prose = '';
  let from = 0;
  for (const { span } of findBlocks(text)) {
    prose += text.slice(from, span[0]) + '\n';
    from = span[1];
  }
  return prose + text.slice(from);
}

function findBlocks(text: string): FoundBlock[] {
  const found: FoundBlock[] = [];
  const lineOf = lineCounter(text);
  // once a search for `-->` fails no later comment can close either: the scan stays linear
  let commentsCanClose = true;
  let from = 0;
  for (;;) {
    const at = text.indexOf(MARKER, from);
    if (at < 0) break;
    const afterMarker = at + MARKER.length;
    from = afterMarker;
    if (isNameChar(text.charCodeAt(afterMarker))) continue; // e.g. `verdict-json2`

    const windowStart = Math.max(0, at - OPENER_WINDOW);
    const before = text.slice(windowStart, at);

    const commentAt = commentsCanClose ? before.lastIndexOf('<!--') : -1;
    if (commentAt >= 0 && COMMENT_PREFIX.test(before.slice(commentAt + 4))) {
      const line = lineOf(windowStart + commentAt);
      const close = text.indexOf('-->', afterMarker);
      if (close < 0) {
        found.push({ line, body: null, span: [windowStart + commentAt, text.length] });
        commentsCanClose = false;
        continue;
      }
      found.push({ line, body: text.slice(afterMarker, close), span: [windowStart + commentAt, close + 3] });
      from = close + 3;
      continue;
    }

    const newline = before.lastIndexOf('\n');
    if (newline < 0 && windowStart > 0) continue; // started too far back to be a fence
    const linePrefix = before.slice(newline + 1);
    const fence = FENCE_PREFIX.exec(linePrefix);
    if (!fence) continue;
    const line = lineOf(at - linePrefix.length);
    const bodyStart = text.indexOf('\n', afterMarker) + 1; // the rest of the opener line is info
    const close = bodyStart > 0 ? closingFence(text, bodyStart, fence[1]) : null;
    if (!close) {
      found.push({ line, body: null, span: [at - linePrefix.length, text.length] });
      break;
    }
    found.push({ line, body: text.slice(bodyStart, close.start), span: [at - linePrefix.length, close.end] });
    from = close.end;
  }
  return found;
}

function closingFence(text: string, from: number, opener: string): { start: number; end: number } | null {
  let start = from;
  for (;;) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    const fence = FENCE_LINE.exec(text.slice(start, end));
    if (fence && fence[1][0] === opener[0] && fence[1].length >= opener.length) return { start, end };
    if (newline < 0) return null;
    start = newline + 1;
  }
}

function readBlock(body: string): Verdict | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    // SyntaxError, or RangeError on absurd nesting: both "invalid"
    return `is not valid JSON (${error instanceof SyntaxError ? jsonErrorPlace(body, error) : shortMessage(error)})`;
  }
  if (!isObject(value)) return 'is not a JSON object';

  const written = typeof value.verdict === 'string' ? value.verdict.trim().toUpperCase() : '';
  const verdict = written === 'PASS' ? 'PASS' : written === 'FAIL' ? 'FAIL' : null;
  if (!verdict) {
    if (value.verdict === undefined) return 'has no "verdict" field';
    return `has verdict ${describe(value.verdict)}, expected PASS or FAIL`;
  }

  const issues: Finding[] = [];
  for (const entry of arrayOf(value.issues)) {
    const finding = toFinding(entry);
    if (finding) issues.push(finding);
  }
  const mustFix = idList(value.must_fix);
  return {
    verdict,
    effective: verdict === 'FAIL' && mustFix.length === 0 ? 'PASS' : verdict,
    issues,
    must_fix: mustFix,
    false_positives: idList(value.false_positives),
  };
}

function toFinding(entry: unknown): Finding | null {
  if (!isObject(entry)) return null;
  const id = toId(entry.id);
  if (id === '') return null;
  const finding: Finding = { id };
  for (const field of TEXT_FIELDS) {
    const text = entry[field];
    if (typeof text === 'string') finding[field] = text;
  }
  const cited = arrayOf(entry.patterns).filter((p): p is string => typeof p === 'string');
  if (cited.length) finding.patterns = cited;
  return finding;
}

/** Trimmed, empties dropped, each once in order. */
function idList(value: unknown): string[] {
  const ids = new Set<string>();
  for (const entry of arrayOf(value)) {
    const id = toId(entry);
    if (id !== '') ids.add(id);
  }
  return [...ids];
}

/** Agents sometimes write ids as numbers. */
function toId(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNameChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || // 0-9
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    code === 45 || // -
    code === 95 // _
  );
}

/** Increasing offsets: each character read once overall. */
function lineCounter(text: string): (offset: number) => number {
  let counted = 0;
  let line = 1;
  return (offset) => {
    for (; counted < offset; counted++) if (text.charCodeAt(counted) === 10) line++;
    return line;
  };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `"${clip(value, 30)}"`;
  if (value === null) return 'null';
  return `of type ${Array.isArray(value) ? 'array' : typeof value}`;
}

function shortMessage(error: unknown): string {
  return clip(error instanceof Error ? error.message : String(error), 80);
}

function clip(text: string, max: number): string {
  const oneLine = text.slice(0, max + 1).replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

function capped(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const hidden = problems.length - MAX_PROBLEMS;
  return [...problems.slice(0, MAX_PROBLEMS), `${hidden} more invalid verdict-json blocks were ignored.`];
}
