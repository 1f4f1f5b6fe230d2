import type { Ranked } from './queries.js';
import { shownScore } from './scoring.js';
import { contentTerms } from '../core/text.js';
import { sanitizeUntrusted } from '../core/sanitize.js';

// The historical-patterns block (SPEC §3.5 steps 3–4): every text untrusted, sanitised on one line (SPEC §4.6).
export const blockText = (text: string) => sanitizeUntrusted(text, { singleLine: true });

export function blockHeader(role: string): string {
  return `=== HISTORICAL PATTERNS (${blockText(role)}) ===`;
}
export const BLOCK_FOOTER = '=== END HISTORICAL PATTERNS ===';

export function trackRecord(r: Pick<Ranked, 'pattern' | 'factors'>): string {
  const p = r.pattern;
  if (p.ignore_count > 0) return `${Math.round(p.success_count - p.ignore_count)} net, ${p.ignore_count}x ignored`;
  if (p.reinforcement_count > 0) return `${p.reinforcement_count}x validated`;
  return `score:${shownScore(r.factors).toFixed(2)}`;
}

/** Shown with --ids, for a finding to cite (SPEC §3.9.1). */
export function shortId(id: string): string {
  return id.slice(0, 7);
}

/** The record begins a new BPE pre-token, so tokens(line) = tokens(text) + tokens(record): each cached once. */
export function linePieces(r: Pick<Ranked, 'pattern' | 'factors'>, role: string, ids = false): [string, string] {
  const via = r.pattern.role !== role ? `, via:${blockText(r.pattern.role)}` : '';
  return [textPiece(r.pattern.text, ids ? r.pattern.id : undefined), ` (${trackRecord(r)}${via})`];
}

export function textPiece(text: string, id?: string): string {
  return `- ${id ? `[${shortId(id)}] ` : ''}${blockText(text)}`;
}

/** A line restating a better-ranked one is left out (a short rule is not lost in a long one). Lazy. */
export function withoutRestatements<T extends { pattern: { text: string } }>(
  ranked: (j: number) => T | undefined,
): { at(i: number): T | undefined; all(): T[] } {
  const kept: { item: T; terms: Set<string> }[] = [];
  let next = 0;
  let exhausted = false;
  const restates = (terms: Set<string>) =>
    kept.some((k) => {
      const [small, large] = terms.size <= k.terms.size ? [terms, k.terms] : [k.terms, terms];
      if (small.size < RESTATEMENT_MIN_TERMS) return false;
      let shared = 0;
      for (const t of small) if (large.has(t)) shared++;
      return shared / small.size >= RESTATEMENT_COVERED && shared / (small.size + large.size - shared) >= RESTATEMENT_SHARED;
    });
  const at = (i: number): T | undefined => {
    while (kept.length <= i && !exhausted) {
      const item = ranked(next++);
      if (item === undefined) exhausted = true;
      else {
        const terms = new Set(contentTerms(item.pattern.text).keys());
        if (!restates(terms)) kept.push({ item, terms });
      }
    }
    return kept[i]?.item;
  };
  return {
    at,
    all: () => {
      at(Infinity);
      return kept.map((k) => k.item);
    },
  };
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
  /** 0 for a summary, which stands for them all. */
  count: number;
  tokens: number;
  block: string;
}

export interface FitInput {
  role: string;
  budget: number;
  /** Best first; asked lazily, in order. */
  line: (i: number) => string | undefined;
  complete: boolean;
  lineTokens: (i: number) => number;
  /** Without a tokenizer: UTF-8 bytes plus the newline. */
  lineBytes: (i: number) => number;
  frameTokens: number;
  frameBytes: number;
  /** `matches`: written for exactly these candidates. */
  summary?: { text: string; tokens: () => number; matches: () => boolean };
  scale: (tokens: number) => number;
  /** For --json. */
  exactTokens: boolean;
}

/** The first that fits: (a) every line, (b) the matching summary, (c) the best lines that fit. */
export function fitBlock(input: FitInput): Fit {
  const { role, budget } = input;
  const empty: Fit = { path: 'skipped', count: 0, tokens: 0, block: '' };
  if (input.line(0) === undefined) return empty;
  const lines = (n: number) => Array.from({ length: n }, (_, i) => input.line(i)!);
  // (a) only when they are every candidate: first by the byte bound
  if (input.complete) {
    let bytes = input.frameBytes;
    let n = 0;
    for (; input.line(n) !== undefined; n++) bytes += input.lineBytes(n);
    if (input.scale(bytes) <= budget) {
      return {
        path: 'full',
        count: n,
        tokens: input.exactTokens ? countAll(input, n) : input.scale(bytes),
        block: renderBlock(role, lines(n)),
      };
    }
  }
  // then by counting, until a line overflows
  let tokens = input.frameTokens;
  let fitting = 0;
  while (input.line(fitting) !== undefined) {
    const next = tokens + input.lineTokens(fitting);
    if (input.scale(next) > budget) break;
    tokens = next;
    fitting++;
  }
  if (input.complete && input.line(fitting) === undefined) {
    return { path: 'full', count: fitting, tokens: input.scale(tokens), block: renderBlock(role, lines(fitting)) };
  }
  // (b) its basis checked last: that walks every candidate
  if (input.summary) {
    const t = input.scale(input.frameTokens + input.summary.tokens());
    if (t <= budget && input.summary.matches())
      return { path: 'summary', count: 0, tokens: t, block: renderBlock(role, [input.summary.text.trim()]) };
  }
  if (fitting === 0) return empty;
  return { path: 'truncated', count: fitting, tokens: input.scale(tokens), block: renderBlock(role, lines(fitting)) };
}

function countAll(input: FitInput, n: number): number {
  let t = input.frameTokens;
  for (let i = 0; i < n; i++) t += input.lineTokens(i);
  return input.scale(t);
}
