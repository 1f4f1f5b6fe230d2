import type { Ranked } from './queries.js';
import { shownScore } from './scoring.js';
import { contentTerms } from '../core/text.js';
import { sanitizeUntrusted } from '../core/sanitize.js';

// The historical-patterns block (SPEC §3.5 step 3) and how it is fitted into a token budget (step 4).

// Every text in the block is untrusted (a pattern is whatever an agent wrote, a role and a summary
// come from the log): each goes through the one sanitiser, on one line, so no line of the block can
// imitate a chat role or be its closing line (SPEC §4.6, issue 7).
const oneLine = (text: string) => sanitizeUntrusted(text, { singleLine: true });

export function blockHeader(role: string): string {
  return `=== HISTORICAL PATTERNS (${oneLine(role)}) ===`;
}
export const BLOCK_FOOTER = '=== END HISTORICAL PATTERNS ===';

/** A pattern's track record: `-2 net, 3x ignored`, else `5x validated`, else `score:0.42` (rate × decay, 0..1). */
export function trackRecord(r: Pick<Ranked, 'pattern' | 'factors'>): string {
  const p = r.pattern;
  if (p.ignore_count > 0) return `${Math.round(p.success_count - p.ignore_count)} net, ${p.ignore_count}x ignored`;
  if (p.reinforcement_count > 0) return `${p.reinforcement_count}x validated`;
  return `score:${shownScore(r.factors).toFixed(2)}`;
}

/** The short id a block line shows with --ids, which a finding can cite as `[p3f2a1c]` (SPEC §3.9.1). */
export function shortId(id: string): string {
  return id.slice(0, 7);
}

/**
 * A line as two pieces, `- [<short id>] <text>` and ` (<record>[, via:<role>])`. The second begins
 * a new pre-token for BPE tokenizers (a space then punctuation), so tokens(line) = tokens(a) +
 * tokens(b): the text's count is cached once per pattern and the record's once per distinct record.
 */
export function linePieces(r: Pick<Ranked, 'pattern' | 'factors'>, role: string, ids = false): [string, string] {
  const via = r.pattern.role !== role ? `, via:${oneLine(r.pattern.role)}` : '';
  return [textPiece(r.pattern.text, ids ? r.pattern.id : undefined), ` (${trackRecord(r)}${via})`];
}

/** The first piece of a line: `- <text>`, or `- [<short id>] <text>` with an id. */
export function textPiece(text: string, id?: string): string {
  return `- ${id ? `[${shortId(id)}] ` : ''}${oneLine(text)}`;
}

/**
 * Leave out a line that restates a better-ranked one (a finding's summary beside the rule it
 * applies, stored before findings were linked): the stemmed content words of the shorter, at least
 * RESTATEMENT_MIN_TERMS of them, covered at RESTATEMENT_COVERED by the longer, and the two sharing
 * RESTATEMENT_SHARED of their words together (so a short rule is not lost inside a long, different one).
 */
export function withoutRestatements<T extends { pattern: { text: string } }>(ranked: T[]): T[] {
  const kept: { item: T; terms: Set<string> }[] = [];
  for (const item of ranked) {
    const terms = new Set(contentTerms(item.pattern.text).keys());
    const restates = kept.some((k) => {
      const [small, large] = terms.size <= k.terms.size ? [terms, k.terms] : [k.terms, terms];
      if (small.size < RESTATEMENT_MIN_TERMS) return false;
      let shared = 0;
      for (const t of small) if (large.has(t)) shared++;
      return shared / small.size >= RESTATEMENT_COVERED && shared / (small.size + large.size - shared) >= RESTATEMENT_SHARED;
    });
    if (!restates) kept.push({ item, terms });
  }
  return kept.map((k) => k.item);
}
const RESTATEMENT_COVERED = 0.8;
const RESTATEMENT_SHARED = 0.6;
const RESTATEMENT_MIN_TERMS = 4;

export function renderBlock(role: string, body: string[]): string {
  return [blockHeader(role), ...body, BLOCK_FOOTER].join('\n');
}

export type FitPath = 'full' | 'summary' | 'truncated' | 'skipped';

export interface Fit {
  path: FitPath;
  /** How many of the ranked lines are in the block (all for a summary). */
  count: number;
  tokens: number;
  block: string;
}

export interface FitInput {
  role: string;
  budget: number;
  /** Rendered lines, best first. */
  lines: string[];
  /** Whether `lines` holds every candidate; when false, more candidates exist beyond them. */
  complete: boolean;
  /** Token count of line i (pieces summed, plus its newline); called lazily, best first. */
  lineTokens: (i: number) => number;
  /** Upper bound of a line's tokens without a tokenizer: its UTF-8 byte length plus the newline. */
  lineBytes: (i: number) => number;
  /** Tokens of header + footer. */
  frameTokens: number;
  frameBytes: number;
  /** The role's stored summary: its token count, and whether it was written for exactly these candidates (both lazy). */
  summary?: { text: string; tokens: () => number; matches: () => boolean };
  /** Scale a raw count by the safety margin. */
  scale: (tokens: number) => number;
  /** Count a block that fits by its byte bound anyway (for --json); otherwise report the bound. */
  exactTokens: boolean;
}

/** The first fitting path: (a) every line, (b) the matching summary, (c) the best lines that fit. */
export function fitBlock(input: FitInput): Fit {
  const { role, budget, lines } = input;
  const empty: Fit = { path: 'skipped', count: 0, tokens: 0, block: '' };
  if (lines.length === 0) return empty;
  // (a) all lines: first by the byte bound (no tokenizer), then by counting until it overflows.
  let bytes = input.frameBytes;
  for (let i = 0; i < lines.length; i++) bytes += input.lineBytes(i);
  let tokens = -1; // not counted while the byte bound already fits (counting may load the tokenizer)
  let fitting = 0; // the longest best-first prefix that fits
  if (input.scale(bytes) <= budget) {
    fitting = lines.length;
  } else {
    tokens = input.frameTokens;
    while (fitting < lines.length) {
      const next = tokens + input.lineTokens(fitting);
      if (input.scale(next) > budget) break;
      tokens = next;
      fitting++;
    }
  }
  if (fitting === lines.length && input.complete) {
    const block = renderBlock(role, lines);
    const total = tokens >= 0 ? input.scale(tokens) : input.exactTokens ? countAll(input) : input.scale(bytes);
    return { path: 'full', count: lines.length, tokens: total, block };
  }
  // (b) the stored summary, when it was written for exactly these candidates.
  if (input.summary?.matches()) {
    const t = input.scale(input.frameTokens + input.summary.tokens());
    if (t <= budget) return { path: 'summary', count: lines.length, tokens: t, block: renderBlock(role, [input.summary.text.trim()]) };
  }
  // (c) the highest-scoring lines that fit.
  if (fitting === 0) return empty;
  return { path: 'truncated', count: fitting, tokens: input.scale(tokens), block: renderBlock(role, lines.slice(0, fitting)) };
}

/** The exact figure for a block whose fit the byte bound already proved. */
function countAll(input: FitInput): number {
  let t = input.frameTokens;
  for (let i = 0; i < input.lines.length; i++) t += input.lineTokens(i);
  return input.scale(t);
}
