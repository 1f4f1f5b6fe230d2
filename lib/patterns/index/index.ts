import type { Database } from '../../store/db.js';
import { IndexCatchingUp } from '../../core/errors.js';
import * as candidates from './candidates.js';
import { rankByKey, rankIndexesBuilt, rankIndexUsable } from './ranking.js';
import { scanRanking, ScanLookups } from './scan.js';
import { packLongLists, TermIndex, termIndexBuilt, termRows } from './terms.js';
import { bm25Query, loadedRelevance, loadRelevance, type TermStatistics, type TermWeight } from './weights.js';
import type { QueryState, RankOptions, Ranking } from './candidates.js';

// The pattern index: what the pattern loop asks of its patterns by their words and their scores —
// near-duplicates of a text (SPEC §3.3), the patterns a finding shares words with and what each word
// weighs (§3.9.1), a ranked page of candidates and the digest of the set (§3.4, §3.5). Two engines
// answer: the fast one (the term index ./terms.ts, the walk by rank keys ./ranking.ts) once its
// indexes are built, and the scan (./scan.ts) while they are being built (a fresh clone's replay sets
// them aside). The scan is also what the fast engine is tested against. See ./README.md.

export type { RankOptions, Ranking, Scored } from './candidates.js';
export type { TermWeight } from './weights.js';

/** A pattern's id and text. */
export interface PatternText {
  id: string;
  text: string;
}

/** One role's patterns looked up by their words, for one command. */
export interface RoleLookups {
  readonly role: string;
  /**
   * Every pattern of the role the text could be a near-duplicate of (Jaccard ≥ threshold of their
   * index terms), and maybe a few more: the caller compares them.
   */
  nearDuplicates(text: string, threshold: number): PatternText[];
  /** The role's patterns that share the most of the text's rarest content words, best first, at most `limit`. */
  sharing(text: string, limit: number): PatternText[];
  /**
   * What each word weighs among the role's patterns: ln(1 + patterns / those holding it); `texts` are asked about
   * first.
   */
  weights(texts: string[]): TermWeight;
  /** Keep what this command read for the next command (a cache: it waits for no lock). */
  packWhatWasRead(): void;
}

/**
 * Term rows read whole in a few milliseconds: while the term index is being built, a store this small
 * is scanned, a larger one is not looked up at all (the scan of a large role would outlive a hook's
 * deadline) — a new project's first writers race its first replay over a handful of rows.
 */
const SCANNED_TERMS = 5_000;

/** Whether a role can be looked up now: the term index is built, or the store is small enough to scan. */
export function lookupsReady(db: Database): boolean {
  return termIndexBuilt(db) || termRows(db) <= SCANNED_TERMS;
}

/**
 * One role's lookups; IndexCatchingUp (a command fails open, SPEC §2) when the store is too large to
 * scan and its term index is not built yet.
 */
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

/**
 * The query's state for this connection, when the ranking weighs relevance by BM25 (no query, or relevance given:
 * none).
 */
function queryOf(db: Database, project: string, opts: RankOptions): QueryState | null {
  if (opts.relevance || opts.query === undefined) return null;
  const query = opts.query;
  return candidates.queryState(db, project, opts.roles, query, () => queryWeights(db, project, opts.roles, query));
}

/**
 * BM25 weights of the query's terms over the roles' patterns; none while the term index is too far behind to count
 * them.
 */
function queryWeights(db: Database, project: string, roles: string[], query: string) {
  if (!lookupsReady(db)) return undefined; // a block ranks without relevance rather than wait for the index
  return bm25Query(
    roles.map((role) => engineFor(db, project, role)),
    query,
  );
}

/**
 * The best `want.limit` candidates of `opts.roles` (every one without a limit), best first, ties by id:
 * by the rank indexes where they order candidates as this context's score does, else by scoring each.
 */
export function rankScores(db: Database, project: string, opts: RankOptions, want: { limit?: number } = {}): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  if (opts.relevance || want.limit === undefined || !rankIndexUsable(opts.ctx) || !rankIndexesBuilt(db))
    return rankByScan(db, project, opts, want.limit);
  const query = queryOf(db, project, opts);
  return rankByKey(db, project, opts, want.limit, query?.q ? query : null);
}

/** The same ranking by scoring every candidate, whatever indexes exist: the reference the walk is checked against. */
export function rankByScan(db: Database, project: string, opts: RankOptions, limit?: number): Ranking {
  if (opts.roles.length === 0) return { top: [], complete: true };
  return scanRanking(
    db,
    project,
    opts,
    candidates.blendFor(db, project, opts, queryOf(db, project, opts), 'table'),
    limit,
  );
}

/** What a summary's basis hashes: how many candidates pass the cut and the sum of their id bits. */
export function candidateDigest(db: Database, project: string, opts: RankOptions): string {
  return candidates.candidateDigest(db, project, opts, queryOf(db, project, opts));
}

/**
 * Whether a pattern first seen after `newest` is a candidate now (then a summary stored with `newest` is
 * overtaken).
 */
export function newCandidateSince(db: Database, project: string, opts: RankOptions, newest: string): boolean {
  return candidates.newCandidateSince(db, project, opts, queryOf(db, project, opts), newest);
}

/**
 * BM25 relevance of the project's non-deprecated patterns of `roles` to the query, the best match 1;
 * a pattern that matches no term is absent; undefined when nothing matches.
 */
export function bm25Relevance(
  db: Database,
  project: string,
  roles: string[],
  query: string,
): Map<string, number> | undefined {
  const q = queryWeights(db, project, roles, query);
  if (!q) return undefined;
  loadRelevance(db, project, roles, q);
  const relevance = loadedRelevance(db);
  return relevance.size ? relevance : undefined; // a query that matches nothing is no signal
}

/** `cairn maintain`, `cairn rebuild`: pack every long posting list of the project; the number written. */
export function packPostingLists(db: Database, project: string): number {
  return lookupsReady(db) ? packLongLists(db, project) : 0;
}
