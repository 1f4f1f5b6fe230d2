import type { Statement } from 'better-sqlite3';
import type { Database } from '../store/db.js';
import { contentTerms, stem, tokenSet } from '../core/text.js';

// The term index (pattern_terms: project, role, term → pattern; terms from core/text indexTerms):
// what lets a writer find the few patterns a text could be a near-duplicate of, or could apply,
// and format-patterns rank by BM25 over this project's own patterns — without loading the role.

/** Postings counted to tell a rare term from a common one; beyond this a term is simply common. */
const RARITY_CAP = 1000;
/** At most this many of a text's rarest content terms look for the patterns it shares words with. */
const SHARING_TERMS = 8;

type Row = { id: string; text: string };

const counters = new WeakMap<Database, Statement<unknown[]>>();

function rarity(db: Database, project: string, roles: string[], terms: string[]): Map<string, number> {
  let count = counters.get(db);
  if (!count) counters.set(db, (count = db.prepare('SELECT COUNT(*) AS n FROM (SELECT 1 FROM pattern_terms WHERE project = ? AND role = ? AND term = ? LIMIT ?)')));
  const out = new Map<string, number>();
  for (const term of terms) {
    let n = 0;
    for (const role of roles) n += ((count as Statement<unknown[]>).get(project, role, term, RARITY_CAP) as { n: number }).n;
    out.set(term, n);
  }
  return out;
}

const inList = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * Every pattern of the role that the text could be a near-duplicate of (word-set Jaccard ≥
 * `threshold`), and some others. Prefix filtering: two sets with Jaccard ≥ t share at least
 * ⌈t·n⌉ of the text's n words, so they share one of any n − ⌈t·n⌉ + 1 of them — the text's rarest,
 * so that few postings are read. Their sizes are within a factor t of each other too.
 */
export function nearDuplicateCandidates(db: Database, project: string, role: string, text: string, threshold: number): Row[] {
  const words = [...tokenSet(text)];
  const n = words.length;
  if (n === 0) return [];
  const shared = Math.ceil(threshold * n - 1e-9);
  const counts = rarity(db, project, [role], [...new Set(words.map(stem))]);
  words.sort((a, b) => counts.get(stem(a))! - counts.get(stem(b))! || (a < b ? -1 : a > b ? 1 : 0));
  const prefix = [...new Set(words.slice(0, n - shared + 1).map(stem))];
  return db
    .prepare(
      `SELECT DISTINCT p.id, p.text FROM pattern_terms t JOIN patterns p ON p.project = t.project AND p.id = t.pattern
       WHERE t.project = ? AND t.role = ? AND t.term IN (${inList(prefix.length)}) AND p.ntok BETWEEN ? AND ? ORDER BY p.id`,
    )
    .all(project, role, ...prefix, shared, Math.floor(n / threshold + 1e-9)) as Row[];
}

/** The role's patterns that share the most of a text's rarest content words, best first: link candidates (SPEC §3.9.1). */
export function sharingPatterns(db: Database, project: string, role: string, text: string, limit: number): Row[] {
  const terms = [...contentTerms(text).keys()];
  const counts = rarity(db, project, [role], terms);
  const rarest = terms.filter((t) => counts.get(t)! > 0).sort((a, b) => counts.get(a)! - counts.get(b)! || (a < b ? -1 : 1)).slice(0, SHARING_TERMS);
  if (rarest.length === 0) return [];
  return db
    .prepare(
      `SELECT p.id, p.text FROM (SELECT pattern, COUNT(*) AS shared FROM pattern_terms WHERE project = ? AND role = ? AND term IN (${inList(rarest.length)})
         GROUP BY pattern ORDER BY shared DESC, pattern LIMIT ?) s JOIN patterns p ON p.project = ? AND p.id = s.pattern ORDER BY s.shared DESC, p.id`,
    )
    .all(project, role, ...rarest, limit, project) as Row[];
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
