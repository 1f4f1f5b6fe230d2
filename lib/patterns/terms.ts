import type { Statement } from 'better-sqlite3';
import type { Database } from '../store/db.js';
import { contentTerms, stem, tokenSet } from '../core/text.js';
import type { TermWeight } from './link.js';

// The term index (pattern_terms: project, role, term → pattern, in the order the patterns were added,
// seq: one number per pattern; terms from core/text indexTerms, written by events/reducer addTerms):
// what lets a writer find the few patterns a text could be a near-duplicate of, or could apply,
// and format-patterns rank by BM25 over this project's own patterns — without loading the role.

/** A sample of the term index holding this many of a term's rows estimates its frequency well enough. */
const COUNTED = 64;
/** The role's patterns are counted exactly up to this many, and estimated from a sample of ids above. */
const ROLE_COUNTED = 1024;
/**
 * How many stems beyond the prefix a near-duplicate lookup reads: each adds a posting list and cuts
 * the candidates it must check (on the bench's 100k store, in-process, 5 KB / 64 KB deliberations:
 * +2 79 / 729 ms, +3 50 / 623, +4 48 / 587, +5 65 / 637, +6 74 / 751, +8 147 / 1,204).
 */
const WINDOW_BEYOND_PREFIX = 4;
/** At most this many of a text's rarest content terms look for the patterns it shares words with. */
const SHARING_TERMS = 6;

type Row = { id: string; text: string };

// How common each term is decides which of a text's words are read first (prefix filtering holds for
// any order) and how much a word of a finding weighs, so an estimate serves: the index keeps each
// term's rows in the order they were added (seq), so the rows added last, the last 1/16, 1/256, … of
// all term rows, are a sample of the role that one index range reads.
const SAMPLE_LEVELS = 4;

const inList = (n: number) => Array.from({ length: n }, () => '?').join(', ');

// A writer asks the same few queries once per text of a deliberation: each is prepared once.
const prepared = new WeakMap<Database, Map<string, Statement<unknown[]>>>();
function statement(db: Database, sql: string): Statement<unknown[]> {
  let byText = prepared.get(db);
  if (!byText) prepared.set(db, (byText = new Map()));
  let s = byText.get(sql);
  if (!s) byText.set(sql, (s = db.prepare(sql)));
  return s;
}

/**
 * One role's term index, for one command's lookups. The texts of a deliberation share most of their
 * words: each word's frequency is estimated once. The estimates live no longer than this object, so
 * what a lookup returns depends only on the database, never on what the process did before.
 */
export class TermIndex {
  private readonly estimates = new Map<string, number>();
  /** Where each sample starts (seq), from the whole sequence down to its last 1/4096. */
  private samples?: number[];

  constructor(
    private readonly db: Database,
    private readonly project: string,
    readonly role: string,
  ) {}

  /** An estimate of how many of the role's patterns hold each term (0: none does). */
  private rarity(terms: string[]): Map<string, number> {
    const unknown = [...new Set(terms)].filter((t) => !this.estimates.has(t));
    if (unknown.length) this.estimate(unknown);
    return new Map(terms.map((t) => [t, this.estimates.get(t)!]));
  }

  /**
   * Count each term up to COUNTED rows, in the whole index, then in the last 1/16 of it, …: a term
   * with fewer rows than that is counted exactly, a common one in the largest sample it still fills,
   * so that no term costs more than a few hundred index entries. One statement per sample for every
   * term still unsettled.
   */
  private estimate(terms: string[]): void {
    if (!this.samples) {
      const last = (statement(this.db, 'SELECT IFNULL(MAX(rowid), 0) AS n FROM pattern_terms').get() as { n: number }).n;
      this.samples = Array.from({ length: SAMPLE_LEVELS }, (_, level) => (level === 0 ? 0 : Math.floor(last - last / 16 ** level) + 1));
    }
    const count = statement(
      this.db,
      `SELECT value AS term, (SELECT COUNT(*) FROM (SELECT 1 FROM pattern_terms WHERE project = @project AND role = @role AND term = value AND seq >= @since LIMIT ${COUNTED})) AS n
       FROM json_each(@terms)`,
    );
    let left = terms;
    for (let level = 0; level < SAMPLE_LEVELS && left.length; level++) {
      const rows = count.all({ project: this.project, role: this.role, since: this.samples[level], terms: JSON.stringify(left) }) as { term: string; n: number }[];
      left = [];
      for (const { term, n } of rows) {
        // a term that fills the last sample is at least that common
        if (n < COUNTED || level === SAMPLE_LEVELS - 1) this.estimates.set(term, Math.max(n * 16 ** level, level === 0 ? 0 : COUNTED * 16 ** (level - 1)));
        else left.push(term);
      }
    }
  }

  /**
   * Every pattern of the role that the text could be a near-duplicate of (word-set Jaccard ≥
   * `threshold`), and a few others. Two such sets share at least k = ⌈t·n⌉ of the text's n words,
   * so at least k' = k − (n − n') of its n' distinct stems (two words may share a stem). Prefix
   * filtering: of the text's stems in any order, the first p = n' − k' + 1 hold at least one shared
   * stem, and the first p + j at least j + 1 — the rarest first, and four more than the prefix, so
   * that few postings are read and few candidates come back. Sizes are within a factor t too.
   * (Postings are grouped by seq, the order the index holds each term's in: grouped by id they sort
   * slower, 9.9 against 6.5 ms for 28,700 postings. CROSS JOIN keeps the candidates first: left to
   * itself SQLite walks every pattern of the project.)
   */
  nearDuplicates(text: string, threshold: number): Row[] {
    const { db, project, role } = this;
    const words = [...tokenSet(text)];
    const n = words.length;
    if (n === 0) return [];
    const stems = [...new Set(words.map(stem))];
    const shared = Math.ceil(threshold * n - 1e-9) - (n - stems.length);
    const sizes = [Math.ceil(threshold * n - 1e-9), Math.floor(n / threshold + 1e-9)];
    if (shared < 1) {
      // too many words share a stem to filter by stems: every pattern of a near size (rare)
      return statement(db, 'SELECT id, text FROM patterns WHERE project = ? AND role = ? AND ntok BETWEEN ? AND ? ORDER BY id').all(project, role, ...sizes) as Row[];
    }
    const counts = this.rarity(stems);
    stems.sort((a, b) => counts.get(a)! - counts.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
    const prefix = stems.length - shared + 1;
    const window = stems.slice(0, Math.min(stems.length, prefix + WINDOW_BEYOND_PREFIX));
    return statement(
      db,
      `SELECT p.id, p.text FROM (SELECT pattern FROM pattern_terms WHERE project = ? AND role = ? AND term IN (${inList(window.length)})
         GROUP BY seq HAVING COUNT(*) >= ?) c CROSS JOIN patterns p ON p.project = ? AND p.id = c.pattern
       WHERE p.ntok BETWEEN ? AND ? ORDER BY p.id`,
    ).all(project, role, ...window, window.length - prefix + 1, project, ...sizes) as Row[];
  }

  /**
   * How rare each term is among the role's patterns, as link.ts weighs a finding's words:
   * `ln(1 + patterns / holding)`; the terms of `texts` (the candidates looked at first) estimated at once.
   */
  weights(texts: string[]): TermWeight {
    let patterns: number | undefined;
    let warm = false;
    return (term) => {
      if (!warm) {
        warm = true;
        this.rarity(texts.flatMap((t) => [...contentTerms(t).keys()]));
      }
      patterns ??= this.patternCount();
      return Math.log(1 + Math.max(1, patterns) / Math.max(1, this.rarity([term]).get(term)!));
    };
  }

  /**
   * How many patterns the role holds: exact below ROLE_COUNTED, else estimated from the ids that start
   * with 'p0', 'p00', … (ids are hashes: a 1/16, 1/256, … sample), so that counting 100k patterns
   * reads a few thousand rows, not the role (5–10 ms at 100k).
   */
  private patternCount(): number {
    const count = statement(
      this.db,
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM patterns WHERE project = ? AND id >= ? AND id < ? AND role = ? LIMIT ${ROLE_COUNTED})`,
    );
    let n = 0;
    for (let level = 0; level < SAMPLE_LEVELS; level++) {
      const prefix = 'p' + '0'.repeat(level);
      const range = level === 0 ? ['', '\uffff'] : [prefix, prefix.slice(0, -1) + '1'];
      const c = (count.get(this.project, ...range, this.role) as { n: number }).n;
      n = c * 16 ** level;
      if (c < ROLE_COUNTED) break;
    }
    return n;
  }

  /** The role's patterns that share the most of a text's rarest content words, best first: link candidates (SPEC §3.9.1). */
  sharing(text: string, limit: number): Row[] {
    const terms = [...contentTerms(text).keys()];
    const counts = this.rarity(terms);
    const rarest = terms.filter((t) => counts.get(t)! > 0).sort((a, b) => counts.get(a)! - counts.get(b)! || (a < b ? -1 : 1)).slice(0, SHARING_TERMS);
    if (rarest.length === 0) return [];
    return statement(
      this.db,
      `SELECT p.id, p.text FROM (SELECT pattern, COUNT(*) AS shared FROM pattern_terms WHERE project = ? AND role = ? AND term IN (${inList(rarest.length)})
         GROUP BY seq ORDER BY shared DESC, pattern LIMIT ?) s CROSS JOIN patterns p ON p.project = ? AND p.id = s.pattern ORDER BY s.shared DESC, p.id`,
    ).all(this.project, this.role, ...rarest, limit, this.project) as Row[];
  }
}

/** BM25 (k1 1.2, b 0.75) over this project's patterns of these roles: the weight of each query term, and the mean length. */
export interface Bm25Query {
  terms: { term: string; idf: number }[];
  avgLength: number;
}

/** Query terms that match more than this share of the patterns say too little to read their postings. */
const COMMON_SHARE = 0.5;
const QUERY_TERMS = 32;

/**
 * The query's weights for BM25 over the project's own patterns of these roles (their count, mean
 * length and term frequencies — another project in a shared store moves nothing). Undefined when no
 * term of the query is in them: no relevance signal.
 */
export function bm25Query(db: Database, project: string, roles: string[], query: string): Bm25Query | undefined {
  const terms = [...contentTerms(query).keys()].slice(0, 128);
  if (terms.length === 0 || roles.length === 0) return undefined;
  const { n, avg } = db.prepare(`SELECT COUNT(*) AS n, AVG(ntok) AS avg FROM patterns WHERE project = ? AND role IN (${inList(roles.length)})`).get(project, ...roles) as {
    n: number;
    avg: number | null;
  };
  if (n === 0) return undefined;
  const df = db
    .prepare(`SELECT term, COUNT(*) AS df FROM pattern_terms WHERE project = ? AND role IN (${inList(roles.length)}) AND term IN (${inList(terms.length)}) GROUP BY term`)
    .all(project, ...roles, ...terms) as { term: string; df: number }[];
  const kept = df
    .filter((d) => d.df <= Math.max(1, n * COMMON_SHARE))
    .sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1))
    .slice(0, QUERY_TERMS);
  if (kept.length === 0) return undefined;
  return { terms: kept.map((d) => ({ term: d.term, idf: Math.log(1 + (n - d.df + 0.5) / (d.df + 0.5)) })), avgLength: avg ?? 1 };
}
