import type { Database } from '../../store/db.js';
import { IndexCatchingUp } from '../../core/errors.js';
import * as candidates from './candidates.js';
import { rankByKey, rankIndexesBuilt, rankIndexUsable } from './ranking.js';
import { scanRanking, ScanLookups } from './scan.js';
import { packLongLists, TermIndex, termIndexBuilt, termRows } from './terms.js';
import { bm25Query, loadedRelevance, loadRelevance, type TermStatistics, type TermWeight } from './weights.js';
import type { QueryState, RankOptions, Ranking } from './candidates.js';

// The pattern index's one interface (./README.md): the fast engine once its indexes are built, the scan meanwhile.

export type { RankOptions, Ranking, Scored } from './candidates.js';
export type { TermWeight } from './weights.js';

export interface PatternText {
  id: string;
  text: string;
}

/** For one command. */
export interface RoleLookups {
  readonly role: string;
  /** Maybe a few more: the caller compares. */
  nearDuplicates(text: string, threshold: number): PatternText[];
  /** Those sharing the most of its rarest content words. */
  sharing(text: string, limit: number): PatternText[];
  /** ln(1 + patterns / those holding the word) */
  weights(texts: string[]): TermWeight;
  /** A cache for the next command: it waits for no lock. */
  packWhatWasRead(): void;
}

/** Scanned while the term index builds (a new project's writers race its first replay). */
const SCANNED_TERMS = 5_000;

export function lookupsReady(db: Database): boolean {
  return termIndexBuilt(db) || termRows(db) <= SCANNED_TERMS;
}

/** Fails open (IndexCatchingUp, SPEC §2) while too large to scan and unindexed. */
export function roleLookups(db: Database, project: string, role: string): RoleLookups {
  return engineFor(db, project, role);
}

function engineFor(db: Database, project: string, role: string): RoleLookups & TermStatistics {
  if (termIndexBuilt(db)) return new TermIndex(db, project, role);
  if (termRows(db) <= SCANNED_TERMS) return new ScanLookups(db, project, role);
  throw new IndexCatchingUp(
    'database',
    'the term index is not built yet (after a fresh clone it is built in the background within seconds; ' +
      'if this persists, run cairn rebuild)',
  );
}

/** null unless relevance is weighed by BM25. */
function queryOf(db: Database, project: string, opts: RankOptions): QueryState | null {
  if (opts.relevance || opts.query === undefined) return null;
  const query = opts.query;
  return candidates.queryState(db, project, opts.roles, query, () => queryWeights(db, project, opts.roles, query));
}

function queryWeights(db: Database, project: string, roles: string[], query: string) {
  if (!lookupsReady(db)) return undefined; // rank without relevance rather than wait for the index
  return bm25Query(
    roles.map((role) => engineFor(db, project, role)),
    query,
  );
}

/** By the rank indexes where they order as this context's score does, else by scoring each. */
export function rankScores(db: Database, project: string, opts: RankOptions, want: { limit?: number } = {}): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  if (opts.relevance || want.limit === undefined || !rankIndexUsable(opts.ctx) || !rankIndexesBuilt(db))
    return rankByScan(db, project, opts, want.limit);
  const query = queryOf(db, project, opts);
  return rankByKey(db, project, opts, want.limit, query?.q ? query : null);
}

/** The reference the walk is checked against. */
export function rankByScan(db: Database, project: string, opts: RankOptions, limit?: number): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  return scanRanking(db, project, opts, candidates.blendFor(db, project, opts, queryOf(db, project, opts), 'table'), limit);
}

/** A summary's basis: count and id bits' sum of those past the cut. */
export function candidateDigest(db: Database, project: string, opts: RankOptions): string {
  const query = queryOf(db, project, opts);
  if (opts.relevance || !rankIndexUsable(opts.ctx) || !rankIndexesBuilt(db)) return candidates.candidateDigest(db, project, opts, query);
  return candidates.digestByKey(db, project, opts, query);
}

/** Such a pattern overtakes a summary stored with `newest`. */
export function newCandidateSince(db: Database, project: string, opts: RankOptions, newest: string): boolean {
  return candidates.newCandidateSince(db, project, opts, queryOf(db, project, opts), newest);
}

/** Of the roles' non-deprecated patterns, best 1. */
export function bm25Relevance(db: Database, project: string, roles: string[], query: string): Map<string, number> | undefined {
  const q = queryWeights(db, project, roles, query);
  if (!q) return undefined;
  loadRelevance(db, project, roles, q);
  const relevance = loadedRelevance(db);
  return relevance.size ? relevance : undefined; // a query that matches nothing is no signal
}

/** `cairn maintain`, `cairn rebuild`. */
export function packPostingLists(db: Database, project: string): number {
  return lookupsReady(db) ? packLongLists(db, project) : 0;
}
