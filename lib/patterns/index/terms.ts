import type { Statement } from 'better-sqlite3';
import { databaseVersion, isBusy, type Database } from '../../store/db.js';
import { IndexCatchingUp } from '../../core/errors.js';
import { contentTerms, indexTerms } from '../../core/text.js';
import type { TermWeight } from '../link.js';
import { postingCounter, type PostingCounter, type Postings } from './posting-count.js';

// The term index (pattern_terms: project, role, term → pattern, in the order the patterns were added,
// seq: one number per pattern; terms from core/text indexTerms, written by events/reducer addTerms):
// what lets a writer find the few patterns a text could be a near-duplicate of, or could apply,
// and format-patterns rank by BM25 over this project's own patterns — without loading the role.

/** Term rows a lookup reads whole in a few milliseconds when the index is set aside (~300 patterns). */
const READ_WHOLE_TERMS = 5_000;
/** A sample of the term index holding this many of a term's rows estimates its frequency well enough. */
const COUNTED = 64;
/** A role of up to this many patterns is counted exactly (on patterns_role: a few hundred pages at most). */
const ROLE_EXACT = 16_384;
/** A sample of ids holding this many of the role's patterns estimates its size well enough. */
const ROLE_COUNTED = 1024;
/**
 * How many stems beyond the prefix a near-duplicate lookup reads: each adds a posting list and cuts
 * the candidates it returns (the bench's 100k store, store-deliberation as a process, 5 KB / 64 KB
 * deliberations, medians of 7: +2 157 / 589 ms, +3 158 / 542, +4 166 / 589) — and up to this many
 * more whose lists cost next to nothing to read, packed or read already (with every list packed, 9
 * alternating runs: 5 KB / 64 KB +3 158 / 424 ms, +4 164 / 348, +5 165 / 313, +6 148 / 300; with
 * none packed, where every list is read from the index, +3 225 / 552, +5 263 / 589, +6 276 / 660).
 */
const WINDOW_BEYOND_PREFIX = 3;
const CHEAP_BEYOND_WINDOW = 3;
/**
 * A posting holds its pattern's seq (up to 2^31 term rows) and size (its distinct words, counted up
 * to this: a larger size counted as this only lets more candidates through).
 */
const SIZE_CAP = 65_535;
/** A near-duplicate lookup counts a pattern's stems in a byte: at most this many (an item of 500 characters has fewer words). */
const COUNTED_STEMS = 255;
/** Postings a TermIndex keeps read at most (6 bytes each): beyond, it forgets those it holds. */
const POSTINGS_HELD = 1_000_000;
/**
 * A posting list this long is kept packed (pattern_postings) once a command has read it from the index,
 * and kept again once this many postings (and a quarter of the list) have been added since: reading
 * 3,300 postings as rows costs ~0.6 ms, as one blob ~0.1 ms (the bench's 100k store).
 */
const KEPT_POSTINGS_MIN = 256;
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
 * Whether the term index can be read: it is built, or the terms are few enough to read whole. A first
 * replay of the log sets the index aside and the run that applies the last line builds it — in the
 * background at 100k patterns (lib/events/log.ts), a few seconds during which every lookup would read
 * all of pattern_terms (7–9 s each at 100k). A new project's first writers race the same way for a
 * moment (one replays the first lines while another looks up), over a handful of rows.
 */
export function termIndexReady(db: Database): boolean {
  if (statement(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'pattern_terms_key'").get()) return true;
  return (statement(db, 'SELECT IFNULL(MAX(rowid), 0) AS n FROM pattern_terms').get() as { n: number }).n <= READ_WHOLE_TERMS;
}

/**
 * One role's term index, for one command's lookups; a command that needs it before it is built fails
 * open at once (SPEC §2), as the hooks of a fresh clone do while they replay. The texts of a
 * deliberation share most of their words: each word's frequency is estimated once. The estimates live
 * no longer than this object, so what a lookup returns depends only on the database, never on what
 * the process did before.
 */
export class TermIndex {
  private readonly estimates = new Map<string, number>();
  private readonly postingLists = new Map<string, Postings>();
  private postingsHeld = 0;
  /** Lists read from the index that pattern_postings lacks, or holds too short: keepPostings writes them. */
  private readonly toKeep = new Map<string, { list: Postings; through: number; last: string }>();
  /** The database's version the postings were read at (a command may write between its lookups). */
  private postingsVersion = '';
  /** Counts a lookup's postings (made at the first lookup, kept for the command's next ones). */
  private counter?: PostingCounter;
  /** Where each sample starts (seq), from the whole sequence down to its last 1/4096. */
  private samples?: number[];

  constructor(
    private readonly db: Database,
    private readonly project: string,
    readonly role: string,
  ) {
    if (!termIndexReady(db)) {
      throw new IndexCatchingUp('database', 'the term index is not built yet (after a fresh clone it is built in the background within seconds; if this persists, run cairn rebuild)');
    }
  }

  /** An estimate of how many of the role's patterns hold each term (0: none does). */
  rarity(terms: string[]): Map<string, number> {
    const unknown = [...new Set(terms)].filter((t) => !this.estimates.has(t));
    if (unknown.length) this.estimate(unknown);
    return new Map(terms.map((t) => [t, this.estimates.get(t)!]));
  }

  /**
   * Count each term up to COUNTED rows in the last 1/4096 of the index, 1/256, 1/16 and the whole: a
   * term with fewer rows than that is counted exactly, a common one from the largest sample it does
   * not fill, so that no term costs more than a few hundred index entries. One statement per sample
   * for every term still unsettled.
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
    // From the smallest sample up: a term's estimate comes from the largest sample it does not fill,
    // which is the one below the first it fills (the samples are nested), so that a common term is
    // read in the small samples only (~85 rows where reading the whole index first took ~150)
    const scaled = (n: number, level: number) => Math.max(n * 16 ** level, level === 0 ? 0 : COUNTED * 16 ** (level - 1));
    const below = new Map<string, number>();
    let left = terms;
    for (let level = SAMPLE_LEVELS - 1; level >= 0 && left.length; level--) {
      const rows = count.all({ project: this.project, role: this.role, since: this.samples[level], terms: JSON.stringify(left) }) as { term: string; n: number }[];
      left = [];
      for (const { term, n } of rows) {
        // a term that fills the smallest sample is at least that common
        if (n >= COUNTED) this.estimates.set(term, level === SAMPLE_LEVELS - 1 ? scaled(n, level) : scaled(below.get(term)!, level + 1));
        else if (level === 0) this.estimates.set(term, n);
        else {
          below.set(term, n);
          left.push(term);
        }
      }
    }
  }

  /**
   * Every pattern of the role that the text could be a near-duplicate of (Jaccard ≥ t of their index
   * terms, lib/patterns/identity.ts), and a few others: the caller compares them. A pattern of m terms
   * (m within a factor t of the text's n) shares at least k = ⌈t·(n + m)/(1 + t)⌉ of them, so at least
   * k − n + w of any w of the text's terms. Prefix filtering: the terms are read rarest first, as many
   * as make that at least one for every m (the prefix, n − ⌈t·n⌉ + 1) and three more, and of the next
   * three those whose lists cost next to nothing to read, so that few postings are read and few
   * candidates come back. A text of function words only has no terms and is no other text's duplicate.
   */
  nearDuplicates(text: string, threshold: number): Row[] {
    const { db, project, role } = this;
    const stems = indexTerms(text).terms;
    const n = stems.length;
    if (n === 0) return [];
    const [least, most] = [Math.ceil(threshold * n - 1e-9), Math.floor(n / threshold + 1e-9)];
    const prefix = n - least + 1;
    if (prefix > COUNTED_STEMS) {
      // a text far longer than an item: every pattern of a near size (rare)
      return statement(db, 'SELECT id, text FROM patterns WHERE project = ? AND role = ? AND ntok BETWEEN ? AND ? ORDER BY id').all(project, role, least, most) as Row[];
    }
    const holding = this.rarity(stems);
    stems.sort((a, b) => holding.get(a)! - holding.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
    const version = databaseVersion(db);
    if (version !== this.postingsVersion) this.forgetPostings(version);
    const window = stems.slice(0, Math.min(stems.length, prefix + WINDOW_BEYOND_PREFIX, COUNTED_STEMS));
    // any w of the text's stems bound the count as below, so the window may take cheap lists further on
    const further = stems.slice(window.length, Math.min(stems.length, window.length + CHEAP_BEYOND_WINDOW, COUNTED_STEMS));
    window.push(...further.filter((term) => this.cheapToRead(term)));
    // how many of the window's stems a pattern of each near size must hold (at least one: the prefix);
    // 0, which a count never equals once raised, for any other size
    const needed = new Uint8Array(SIZE_CAP + 1);
    for (let m = least; m <= Math.min(most, SIZE_CAP); m++) needed[m] = Math.max(1, Math.ceil((threshold * (n + m)) / (1 + threshold) - 1e-9) - n + window.length);
    const lists = window.map((term) => this.postings(term));
    // Count each pattern's postings by its seq; it is a candidate when its count reaches what its size
    // needs (found by the term whose posting made it so).
    const candidates: [string, number][] = [];
    (this.counter ??= postingCounter()).reached(lists, needed).forEach((found, place) => {
      for (const seq of found) candidates.push([window[place], seq]);
    });
    if (candidates.length === 0) return [];
    // each candidate by one of its postings (term, seq); CROSS JOIN keeps that order
    return statement(
      db,
      `SELECT p.id, p.text FROM json_each(?) c CROSS JOIN pattern_terms t ON t.project = ? AND t.role = ? AND t.term = c.value ->> 0 AND t.seq = c.value ->> 1
         CROSS JOIN patterns p ON p.project = t.project AND p.id = t.pattern ORDER BY p.id`,
    ).all(JSON.stringify(candidates), project, role) as Row[];
  }

  /**
   * A term's postings in the role, in the order they were added, each its pattern's seq and size.
   * The texts of a deliberation share many of their rarer words: each list is read once per command,
   * within a bound (a 64 KB deliberation at 100k patterns reads 438 lists, 220 of them distinct).
   */
  postings(term: string): Postings {
    let list = this.postingLists.get(term);
    if (list) return list;
    // the kept list and the postings added since in one snapshot
    list = this.db.inTransaction ? this.readPostings(term) : this.db.transaction(() => this.readPostings(term))();
    if (this.postingsHeld + list.seqs.length > POSTINGS_HELD) this.forgetPostings(this.postingsVersion);
    this.postingLists.set(term, list);
    this.postingsHeld += list.seqs.length;
    return list;
  }

  /**
   * The postings kept packed up to a seq (`through`), and those added since from the index. A kept list
   * counts only while its last posting is still in the index as it was (seq and pattern): a replay that
   * numbered the postings differently (a merged log) makes it stale, and it is read whole again. Term
   * rows are only ever added after every row there (seq grows) or all removed (a replay), so the
   * postings up to that seq are the ones kept.
   */
  private readPostings(term: string): Postings {
    const { db, project, role } = this;
    const kept = statement(db, 'SELECT through, last, postings FROM pattern_postings WHERE project = ? AND role = ? AND term = ?').get(project, role, term) as
      | { through: number; last: string; postings: Buffer }
      | undefined;
    const head =
      kept &&
      kept.postings.length % POSTING_BYTES === 0 &&
      statement(db, 'SELECT 1 FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq = ? AND pattern = ?').get(project, role, term, kept.through, kept.last)
        ? unpack(kept.postings)
        : undefined;
    // seq and size in one number per row (one column reads fastest)
    const since = statement(db, `SELECT seq * ${SIZE_CAP + 1} + MIN(ntok, ${SIZE_CAP}) FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq > ?`).pluck();
    const added = since.all(project, role, term, head ? kept!.through : 0) as number[];
    const from = head?.seqs.length ?? 0;
    const list = { seqs: new Int32Array(from + added.length), sizes: new Uint16Array(from + added.length) };
    if (head) {
      list.seqs.set(head.seqs);
      list.sizes.set(head.sizes);
    }
    for (let i = 0; i < added.length; i++) {
      const size = added[i] % (SIZE_CAP + 1);
      list.sizes[from + i] = size;
      list.seqs[from + i] = (added[i] - size) / (SIZE_CAP + 1);
    }
    if (added.length >= Math.max(KEPT_POSTINGS_MIN, from / 4)) {
      const through = list.seqs[list.seqs.length - 1];
      const last = statement(db, 'SELECT pattern FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq = ?').pluck().get(project, role, term, through) as string;
      this.toKeep.set(term, { list, through, last });
    }
    return list;
  }

  /**
   * Keep the long lists this command read from the index packed, so that the next command reads each
   * as one blob. A cache: it waits for no lock (a busy database keeps nothing), and what it keeps is
   * checked by every reader.
   */
  keepPostings(): void {
    if (this.toKeep.size === 0) return;
    const patience = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma('busy_timeout = 0');
    try {
      this.writeKept();
    } catch (err) {
      if (!isBusy(err)) throw err;
    } finally {
      this.db.pragma(`busy_timeout = ${patience}`);
      this.toKeep.clear();
    }
  }

  /** Keep each of these terms' lists packed where it is not, or is stale (cairn maintain); the number written. */
  keepLists(terms: string[]): number {
    let written = 0;
    let held = 0;
    for (const term of terms) {
      const before = this.toKeep.size;
      this.db.transaction(() => this.readPostings(term))();
      if (this.toKeep.size > before) held += this.toKeep.get(term)!.list.seqs.length;
      if (held > POSTINGS_HELD) {
        written += this.writeKept();
        held = 0;
      }
    }
    return written + this.writeKept();
  }

  private writeKept(): number {
    const { db, project, role, toKeep } = this;
    const write = statement(db, 'INSERT OR REPLACE INTO pattern_postings (project, role, term, through, last, postings) VALUES (?, ?, ?, ?, ?, ?)');
    db.transaction(() => {
      for (const [term, { list, through, last }] of toKeep) write.run(project, role, term, through, last, pack(list));
    }).immediate();
    const written = toKeep.size;
    toKeep.clear();
    return written;
  }

  /** Whether a term's list is read already, or kept packed (a tenth of the cost of reading it from the index). */
  private cheapToRead(term: string): boolean {
    if (this.postingLists.has(term)) return true;
    return statement(this.db, 'SELECT 1 FROM pattern_postings WHERE project = ? AND role = ? AND term = ?').get(this.project, this.role, term) !== undefined;
  }

  private forgetPostings(version: string): void {
    this.postingLists.clear();
    this.postingsHeld = 0;
    this.postingsVersion = version;
  }

  /**
   * How rare each term is among the role's patterns, as link.ts weighs a finding's words:
   * `ln(1 + patterns / holding)`; the terms of `texts` (the candidates looked at first) estimated at once.
   */
  weights(texts: string[]): TermWeight {
    let patterns: number | undefined;
    let warm = false;
    const weights = new Map<string, number>(); // a link weighs each term of each candidate, many times over
    return (term) => {
      let weight = weights.get(term);
      if (weight !== undefined) return weight;
      if (!warm) {
        warm = true;
        this.rarity(texts.flatMap((t) => [...contentTerms(t).keys()]));
      }
      patterns ??= this.size().patterns;
      weight = Math.log(1 + Math.max(1, patterns) / Math.max(1, this.rarity([term]).get(term)!));
      weights.set(term, weight);
      return weight;
    };
  }

  /**
   * How many patterns the role holds, and their mean length: exact up to ROLE_EXACT, else estimated
   * from the role's patterns among the ids that start with 'p00' or 'p000' (ids are hashes: a 1/256
   * or 1/4096 sample of the project). The 1/256 sample is read first and tells a small role, which is
   * then counted whole, from a large one, so that sizing 100k patterns reads ~400 rows (counting
   * 16,384 first and then a 1/16 sample cost 3–5 ms).
   */
  size(): { patterns: number; meanLength: number } {
    const exact = statement(this.db, `SELECT COUNT(*) AS n, IFNULL(SUM(ntok), 0) AS length FROM (SELECT ntok FROM patterns WHERE project = ? AND role = ? LIMIT ${ROLE_EXACT})`);
    const sample = statement(
      this.db,
      `SELECT COUNT(*) AS n, IFNULL(SUM(ntok), 0) AS length FROM (SELECT ntok FROM patterns WHERE project = ? AND id >= ? AND id < ? AND role = ? LIMIT ${ROLE_COUNTED})`,
    );
    const size = (n: number, length: number, scale: number) => ({ patterns: n * scale, meanLength: n ? length / n : 1 });
    const sampled = (level: number) => {
      const prefix = 'p' + '0'.repeat(level);
      const { n, length } = sample.get(this.project, prefix, prefix.slice(0, -1) + '1', this.role) as { n: number; length: number };
      return { n, length, scale: 16 ** level };
    };
    const probe = sampled(SAMPLE_LEVELS - 2);
    if (probe.n * probe.scale < ROLE_EXACT) {
      const { n, length } = exact.get(this.project, this.role) as { n: number; length: number };
      if (n < ROLE_EXACT) return size(n, length, 1);
    }
    const best = probe.n < ROLE_COUNTED ? probe : sampled(SAMPLE_LEVELS - 1);
    return size(best.n, best.length, best.scale);
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

/**
 * cairn maintain: every long posting list of the project's term index kept packed, so that the
 * writers' near-duplicate lookups read each as one blob (they keep up to date what they read); the
 * number of lists written.
 */
export function keepPostingLists(db: Database, project: string): number {
  if (!termIndexReady(db)) return 0;
  const long = db
    .prepare(`SELECT role, term FROM pattern_terms WHERE project = ? GROUP BY role, term HAVING COUNT(*) >= ${KEPT_POSTINGS_MIN} ORDER BY role, term`)
    .all(project) as { role: string; term: string }[];
  let written = 0;
  for (const role of new Set(long.map((r) => r.role))) {
    written += new TermIndex(db, project, role).keepLists(long.filter((r) => r.role === role).map((r) => r.term));
  }
  return written;
}

// A kept list is its seqs (4 bytes each), then its sizes (2 bytes each), in this machine's byte order:
// the database is this machine's cache.
function pack({ seqs, sizes }: Postings): Buffer {
  const bytes = Buffer.allocUnsafe(seqs.byteLength + sizes.byteLength);
  bytes.set(new Uint8Array(seqs.buffer, seqs.byteOffset, seqs.byteLength), 0);
  bytes.set(new Uint8Array(sizes.buffer, sizes.byteOffset, sizes.byteLength), seqs.byteLength);
  return bytes;
}

const POSTING_BYTES = Int32Array.BYTES_PER_ELEMENT + Uint16Array.BYTES_PER_ELEMENT;

function unpack(blob: Buffer): Postings {
  const bytes = blob.byteOffset % Int32Array.BYTES_PER_ELEMENT === 0 ? blob : new Uint8Array(blob); // a view needs aligned bytes
  const n = bytes.byteLength / POSTING_BYTES;
  return { seqs: new Int32Array(bytes.buffer, bytes.byteOffset, n), sizes: new Uint16Array(bytes.buffer, bytes.byteOffset + n * Int32Array.BYTES_PER_ELEMENT, n) };
}

/**
 * BM25 (k1 1.2, b 0.75) over this project's patterns of these roles: each query term's weight (its
 * idf in units of BM25_UNIT, a whole number, so that a pattern's sum of weights is exact in any order
 * and its relevance the same number whichever way it is read), and the patterns' mean length.
 */
export interface Bm25Query {
  terms: { term: string; weight: number }[];
  avgLength: number;
}

const BM25_UNIT = 2 ** -20;
const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** Query terms that match more than this share of the patterns say too little to read their postings. */
const COMMON_SHARE = 0.5;
const QUERY_TERMS = 32;

/**
 * The query's weights for BM25 over the project's own patterns of these roles (their count, mean
 * length and term frequencies — another project in a shared store moves nothing), from the term
 * index's estimates: exact in a role of up to 1,024 patterns, within a few per cent above, and read
 * in a few hundred index entries where counting cost 17 ms at 100k patterns (issue 8). Undefined
 * when no term of the query is in them, or the term index is not built yet: no relevance signal.
 */
export function bm25Query(db: Database, project: string, roles: string[], query: string): Bm25Query | undefined {
  const terms = [...contentTerms(query).keys()].slice(0, 128);
  // before the term index is built, a block ranks without relevance rather than wait for it
  if (terms.length === 0 || roles.length === 0 || !termIndexReady(db)) return undefined;
  const indexes = roles.map((role) => new TermIndex(db, project, role));
  const sizes = indexes.map((index) => index.size());
  const n = sizes.reduce((sum, s) => sum + s.patterns, 0);
  if (n === 0) return undefined;
  const avgLength = sizes.reduce((sum, s) => sum + s.patterns * s.meanLength, 0) / n;
  const holding = indexes.map((index) => index.rarity(terms));
  const df = terms.map((term) => ({ term, df: holding.reduce((sum, h) => sum + h.get(term)!, 0) }));
  const kept = df
    .filter((d) => d.df > 0 && d.df <= Math.max(1, n * COMMON_SHARE))
    .sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1))
    .slice(0, QUERY_TERMS);
  if (kept.length === 0) return undefined;
  const idf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
  return { terms: kept.map((d) => ({ term: d.term, weight: Math.round(idf(d.df) / BM25_UNIT) })), avgLength };
}

/**
 * bm25Sql in JavaScript, operation for operation, so that both give the very same number (tested):
 * a pattern's BM25 from the sum of its matched terms' weights and its length.
 */
export function bm25(weights: number, length: number, avgLength: number): number {
  return (weights * BM25_UNIT * (BM25_K1 + 1)) / (1 + BM25_K1 * (1 - BM25_B + (BM25_B * length) / avgLength));
}

/**
 * Every pattern of `roles` that matches the query, deprecated or not, with its seq, its BM25 (as
 * matchesSql computes it) and, to find its id, the role and the query term of one of its postings:
 * each role's matches in seq order, from `starts[r]` to `starts[r + 1]` (matchIn finds one). Summed
 * in JavaScript over the posting lists the writers keep packed: SQLite's GROUP BY over the same
 * 37,000 postings took ~30 ms at 100k patterns (issue 8).
 */
export interface QueryMatches {
  /** Each matching pattern's seq (where its postings start: its row's term_seq), by role, ascending. */
  seqs: Int32Array;
  bm: Float64Array;
  /** Where each role's matches start in `seqs` (one more entry: where they end). */
  starts: Int32Array;
}

// A posting as one number that sorts by seq, then term: (seq · QUERY_TERMS + term) · 2^16 + size,
// below 2^53 (seq < 2^31), so exact.
const SIZE_SPAN = SIZE_CAP + 1;

export function queryMatches(db: Database, project: string, roles: string[], q: Bm25Query): QueryMatches {
  const keys = roles.map((role) => {
    const index = new TermIndex(db, project, role);
    const lists = q.terms.map(({ term }) => index.postings(term));
    const sorted = new Float64Array(lists.reduce((sum, l) => sum + l.seqs.length, 0));
    let k = 0;
    lists.forEach(({ seqs, sizes }, t) => {
      for (let i = 0; i < seqs.length; i++) sorted[k++] = (seqs[i] * QUERY_TERMS + t) * SIZE_SPAN + sizes[i];
    });
    return sorted.sort();
  });
  const total = keys.reduce((sum, k) => sum + k.length, 0);
  const out = { seqs: new Int32Array(total), bm: new Float64Array(total), starts: new Int32Array(roles.length + 1) };
  let n = 0;
  const seqOf = (key: number) => Math.floor(key / SIZE_SPAN / QUERY_TERMS);
  const termOf = (key: number) => Math.floor(key / SIZE_SPAN) % QUERY_TERMS;
  keys.forEach((sorted, r) => {
    out.starts[r] = n;
    for (let i = 0; i < sorted.length; ) {
      const seq = seqOf(sorted[i]);
      out.seqs[n] = seq;
      const size = sorted[i] % SIZE_SPAN;
      let weights = 0; // whole numbers (BM25_UNIT): exact in any order
      for (; i < sorted.length && seqOf(sorted[i]) === seq; i++) weights += q.terms[termOf(sorted[i])].weight;
      out.bm[n++] = bm25(weights, size, q.avgLength);
    }
  });
  out.starts[roles.length] = n;
  return { seqs: out.seqs.slice(0, n), bm: out.bm.slice(0, n), starts: out.starts };
}

/** Where the match with this seq among role `r`'s is in `m`, or -1 when the pattern matches no term of the query. */
export function matchIn(m: QueryMatches, r: number, seq: number): number {
  let lo = m.starts[r];
  let hi = m.starts[r + 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (m.seqs[mid] < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo < m.starts[r + 1] && m.seqs[lo] === seq ? lo : -1;
}

/**
 * The query's terms as the rows of a CTE `q (term, w)` and the constants of `bm25Sql`, into `params`:
 * the WITH clause of every statement that weighs patterns against the query.
 */
export function queryTermsSql(q: Bm25Query, params: Record<string, unknown>): string {
  Object.assign(params, { bmUnit: BM25_UNIT, bmK1: BM25_K1, bmB: BM25_B, bmAvg: q.avgLength });
  const rows = q.terms.map((t, i) => ((params[`qt${i}`] = t.term), (params[`qw${i}`] = t.weight), `(@qt${i}, @qw${i})`));
  return `q (term, w) AS (VALUES ${rows.join(', ')})`;
}

/**
 * A pattern's BM25 from the sum of its matched terms' weights and its length. Term frequency is 1 (a
 * pattern is one sentence and indexes each term once), so the score is that sum times one factor of
 * the length. One expression for every statement, so that each computes the very same number.
 */
export function bm25Sql(weights: string, length: string): string {
  return `(${weights} * @bmUnit * (@bmK1 + 1) / (1 + @bmK1 * (1 - @bmB + @bmB * ${length} / @bmAvg)))`;
}

/**
 * The BM25 of each pattern of `roles` that matches the query, deprecated or not, as `(id, bm)` rows: a
 * CTE body that reads the postings of the query's terms alone (each holds its pattern's length; CROSS
 * JOIN reads them term by term, where SQLite would walk the roles' postings). Leaving the deprecated
 * out is the reader's part: a test of each match costs as much as the sum (12 ms at 100k patterns),
 * and the few a block needs are read from their rows anyway.
 */
export function matchesSql(project: string, roles: string[], params: Record<string, unknown>): string {
  params.project = project;
  const list = roles.map((role, i) => ((params[`mr${i}`] = role), `@mr${i}`)).join(', ');
  return `SELECT id, bm FROM (SELECT t.pattern AS id, ${bm25Sql('SUM(q.w)', 't.ntok')} AS bm FROM q CROSS JOIN pattern_terms t ON t.term = q.term
      WHERE t.project = @project AND t.role IN (${list}) GROUP BY t.seq) WHERE bm > 0`;
}

/**
 * The BM25 of the pattern of the current row of `patterns`, from its own postings (its terms start at
 * term_seq): a few index lookups, for a ranking that reads patterns by the rank indexes. NULL when it
 * matches no term.
 */
export function patternBm25Sql(): string {
  return bm25Sql(
    `(SELECT SUM(q.w) FROM q CROSS JOIN pattern_terms t ON t.project = patterns.project AND t.role = patterns.role AND t.term = q.term AND t.seq = patterns.term_seq)`,
    'patterns.ntok',
  );
}
