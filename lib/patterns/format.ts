import type { Store } from '../store/store.js';
import { roleBudget, sameKindRoles } from '../store/config.js';
import { candidateDigest, newCandidateSince, rankScores, type RankOptions } from './index/index.js';
import { fitBlock, linePieces, blockHeader, blockText, textPiece, withoutRestatements, BLOCK_FOOTER, type FitPath } from './block.js';
import { TokenCounter, TokenizerUnavailable } from '../store/tokens.js';
import { nowMs } from '../core/clock.js';
import { sha256 } from '../core/text.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { MAX_ROLE_CHARS, MAX_SUMMARY_BYTES, type EventPayload } from '../events/types.js';
import { CairnError } from '../core/errors.js';
import { checkScope } from './deliberation.js';
import { appendEvents, patternDb } from '../events/log.js';
import { listPatterns, loadRanked, newestFirstSeen, storedSummary } from './queries.js';
import { scorePattern } from './scoring.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';

// format-patterns (SPEC §3.5; docs/internals.md, "The block"): rank, fit the budget, record the injection.

export interface FormatOptions {
  role: string;
  issue: string | null;
  run: string | null;
  labels: string[];
  files: string[];
  phase: string | null;
  budget?: number;
  remainingTokens?: number;
  /** BM25 over the project's patterns (SPEC §3.4). */
  query?: string;
  /** From embeddings (0..1); replaces BM25. */
  relevance?: Map<string, number>;
  /** For --json. */
  exactTokens: boolean;
  /** Each line's short id, for findings to cite (SPEC §3.9.1). */
  ids?: boolean;
}

export interface FormatResult {
  role: string;
  budget: number;
  tokens: number;
  path: FitPath;
  basis: string;
  patterns: { id: string; score: number; text: string; record: string }[];
  block: string;
  tokenizerLoaded: boolean;
}

export function candidateBasis(digest: string): string {
  return sha256(`candidates ${digest}`).slice(0, 32);
}

export function effectiveBudget(store: Store, role: string, budget?: number, remaining?: number): number {
  let b = budget ?? roleBudget(store.config, role);
  if (remaining !== undefined) b = Math.min(b, remaining - store.config.reserve);
  return Math.max(0, b);
}

/** Per pattern.injected event: lines stay small. */
const INJECTED_PER_EVENT = 100;

/** A dash, 12 characters of text, a record, a newline. */
const MIN_LINE_TOKENS = 4;

function rankOptions(
  store: Store,
  opts: Pick<FormatOptions, 'role' | 'issue' | 'run' | 'labels' | 'files' | 'phase' | 'query' | 'relevance'>,
): RankOptions {
  const role = opts.role.toLowerCase();
  return {
    roles: sameKindRoles(store.config, role),
    ctx: {
      now: nowMs(),
      role,
      labels: opts.labels,
      files: opts.files,
      phase: opts.phase ?? undefined,
      prior: store.config.prior,
    },
    query: opts.query,
    relevance: opts.relevance,
    excludeDismissed: opts.issue !== null || opts.run !== null ? { issue: opts.issue ?? '', run: opts.run ?? '' } : undefined,
  };
}

export function currentBasis(
  store: Store,
  opts: Pick<FormatOptions, 'role' | 'issue' | 'run' | 'labels' | 'files' | 'phase' | 'query' | 'relevance'>,
): string {
  return basisOf(store, rankOptions(store, opts));
}

function basisOf(store: Store, rank: RankOptions): string {
  return candidateBasis(candidateDigest(patternDb(store), store.project, rank));
}

export function formatPatterns(store: Store, opts: FormatOptions): FormatResult {
  const role = opts.role.toLowerCase();
  const budget = effectiveBudget(store, role, opts.budget, opts.remainingTokens);
  const skipped = (): FormatResult => ({
    role,
    budget,
    tokens: 0,
    path: 'skipped',
    basis: '',
    patterns: [],
    block: '',
    tokenizerLoaded: false,
  });
  // too little room to be useful (SPEC §3.5 step 2)
  if (opts.remainingTokens !== undefined && budget < store.config.minBlock) return skipped();

  const limit = Math.floor(budget / (MIN_LINE_TOKENS * store.config.tokenizer.margin)) + 1;
  const summaryRow = storedSummary(patternDb(store), store.project, role);
  const rank = rankOptions(store, opts);
  const reader = rankedReader(store, rank, limit);
  if (!reader) return skipped();
  const { ranked } = reader;
  const basis = basisTaker(store, rank, opts.exactTokens);
  // a summary is untrusted too: it may span lines, none can close the block
  const summary = summaryRow && sanitizeUntrusted(summaryRow.text);

  const pieces: [string, string][] = [];
  const piecesAt = (i: number): [string, string] | undefined => {
    if (pieces[i] === undefined) {
      const r = ranked.at(i);
      if (r === undefined) return undefined;
      pieces[i] = linePieces(r, role, opts.ids);
    }
    return pieces[i];
  };
  const lineAt = (i: number) => {
    const p = piecesAt(i);
    return p && p[0] + p[1];
  };
  const counter = new TokenCounter(patternDb(store), store.config.tokenizer.encoding, store.deadline);
  const margin = store.config.tokenizer.margin;
  const header = blockHeader(role) + '\n';
  const footer = BLOCK_FOOTER;
  const tokens = tokenMeter(store, counter, opts.exactTokens);
  try {
    const fit = fitBlock({
      role,
      budget,
      line: lineAt,
      get complete() {
        return reader.complete;
      },
      // the newline may merge with the line's last token, never the reverse
      lineTokens: (i) => tokens(pieces[i][0]) + tokens(pieces[i][1]) + 1,
      lineBytes: (i) => Buffer.byteLength(lineAt(i)!) + 1,
      get frameTokens() {
        return tokens(header) + tokens(footer);
      },
      frameBytes: Buffer.byteLength(header) + Buffer.byteLength(footer),
      summary: summary ? { text: summary, tokens: () => tokens(summary) + 1, matches: () => basis.matches(summaryRow!) } : undefined,
      scale: (t) => Math.ceil(t * margin),
      exactTokens: opts.exactTokens,
    });
    const included = fit.path === 'summary' ? ranked.all() : Array.from({ length: fit.count }, (_, i) => ranked.at(i)!);
    const shown = (r: Ranked, i: number) => ({
      id: r.pattern.id,
      score: round(r.score),
      text: blockText(r.pattern.text),
      record: piecesAt(i)![1].slice(2, -1),
    });
    return {
      role,
      budget,
      tokens: fit.tokens,
      path: fit.path,
      basis: basis.taken,
      patterns: fit.path === 'skipped' ? [] : included.map(shown),
      block: fit.block,
      tokenizerLoaded: counter.loadedTokenizer,
    };
  } finally {
    counter.dispose();
  }
}

type Ranked = ReturnType<typeof loadRanked>[number];

/** Restatements left out; a page at a time, each four times the last. */
function rankedReader(store: Store, rank: RankOptions, limit: number) {
  let asked = Math.ceil(limit / 16);
  let ranking = rankScores(patternDb(store), store.project, rank, { limit: asked });
  if (ranking.top.length === 0) return undefined;
  const loaded = loadRanked(patternDb(store), store.project, ranking.top, rank);
  const rankedAt = (j: number) => {
    while (j >= loaded.length && !ranking.complete && asked < limit) {
      asked = Math.min(limit, asked * 4);
      ranking = rankScores(patternDb(store), store.project, rank, { limit: asked });
      // a writer may have moved a pattern between two reads: none is shown twice
      const shown = new Set(loaded.map((r) => r.pattern.id));
      loaded.push(
        ...loadRanked(
          patternDb(store),
          store.project,
          ranking.top.filter((s) => !shown.has(s.id)),
          rank,
        ),
      );
    }
    return loaded[j];
  };
  return {
    ranked: withoutRestatements(rankedAt),
    get complete() {
      return ranking.complete;
    },
  };
}

/** For a summary only when needed: a pass over every candidate. */
function basisTaker(store: Store, rank: RankOptions, exactTokens: boolean) {
  let taken = exactTokens ? basisOf(store, rank) : '';
  return {
    get taken() {
      return taken;
    },
    matches(stored: { basis: string; newest: string | null }): boolean {
      // a candidate first seen since the summary is not in its basis: no pass needed
      if (!taken && stored.newest && newCandidateSince(patternDb(store), store.project, rank, stored.newest)) return false;
      taken ||= basisOf(store, rank);
      return stored.basis === taken;
    },
  };
}

/** No tokenizer on a hook's path: uncached, a piece counts as its UTF-8 length (SPEC §3.5). */
function tokenMeter(store: Store, counter: TokenCounter, exactTokens: boolean): (text: string) => number {
  let exact = exactTokens;
  return (text) => {
    if (exact) {
      try {
        return counter.count(text);
      } catch (err) {
        if (!(err instanceof TokenizerUnavailable)) throw err;
        exact = false;
        store.log.warn(`${err.message}: the block is fitted, and its tokens reported, by the UTF-8 byte bound`);
      }
    }
    return counter.known(text) ?? Buffer.byteLength(text);
  };
}

/** So feedback and outcome grading can attribute the verdict (SPEC §3.5 step 6). */
export function recordInjection(store: Store, result: FormatResult, issue: string | null, run: string | null): void {
  if (result.patterns.length === 0 || (issue === null && run === null)) return;
  // a summary may stand for thousands: attributed to the best 100
  const ids = (result.path === 'summary' ? result.patterns.slice(0, INJECTED_PER_EVENT) : result.patterns).map((p) => p.id);
  const events: EventPayload[] = [];
  for (let i = 0; i < ids.length; i += INJECTED_PER_EVENT) {
    events.push({
      type: 'pattern.injected',
      role: result.role,
      issue,
      run,
      patterns: ids.slice(i, i + INJECTED_PER_EVENT),
      path: result.path,
      tokens: result.tokens,
    });
  }
  appendEvents(store, events);
}

/** `cairn maintain`, never a hook: blocks then fit by exact counts. */
export function fillTokenCounts(store: Store, progress: Progress = NO_PROGRESS): number {
  const db = patternDb(store);
  const counter = new TokenCounter(db, store.config.tokenizer.encoding, store.deadline);
  const now = nowMs();
  const pieces = new Set<string>([BLOCK_FOOTER]);
  for (const pattern of listPatterns(db, store.project)) {
    pieces.add(textPiece(pattern.text));
    for (const viewer of sameKindRoles(store.config, pattern.role)) {
      pieces.add(blockHeader(viewer) + '\n');
      pieces.add(linePieces({ pattern, factors: scorePattern(pattern, { now, role: viewer, prior: store.config.prior }) }, viewer)[1]);
    }
  }
  let counted = 0;
  let seen = 0;
  try {
    for (const piece of pieces) {
      if (++seen % 64 === 0) progress(seen, pieces.size);
      if (counter.known(piece) !== undefined) continue;
      counter.count(piece);
      counted++;
    }
  } finally {
    counter.dispose();
  }
  return counted;
}

/** `cairn store-summary`: sanitised now and when shown; one event line (SPEC §3.2). */
export function storeSummary(
  store: Store,
  role: string,
  raw: string,
  givenBasis: string | null,
  context: Pick<FormatOptions, 'labels' | 'files' | 'phase'>,
): { basis: string; text: string } {
  const name = role.toLowerCase();
  checkScope({ role: name }, { role: MAX_ROLE_CHARS });
  const text = sanitizeUntrusted(raw);
  if (!text) throw new CairnError('input', 'no summary text on stdin');
  if (Buffer.byteLength(text) > MAX_SUMMARY_BYTES)
    throw new CairnError('input', `the summary is ${Buffer.byteLength(text)} bytes; at most ${MAX_SUMMARY_BYTES} are stored`);
  const basis = givenBasis ?? currentBasis(store, { role: name, issue: null, run: null, ...context });
  // taken after the basis: a later sighting only makes newCandidateSince's check rarer, never wrong
  const newest = givenBasis === null ? newestFirstSeen(patternDb(store), store.project, sameKindRoles(store.config, name)) : undefined;
  appendEvents(store, [{ type: 'summary.stored', role: name, basis: basis.slice(0, 64), text, ...(newest ? { newest } : {}) }]);
  return { basis, text };
}

const round = (n: number) => Math.round(n * 1e4) / 1e4;
