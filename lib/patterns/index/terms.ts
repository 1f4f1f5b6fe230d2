import type { Statement } from 'better-sqlite3';
import { databaseVersion, isBusy, type Database } from '../../store/db.js';
import { indexTerms } from '../../core/text.js';
import { postingCounter, type PostingCounter, type Postings } from './posting-count.js';
import { rarestTerms, termWeights, type TermStatistics, type TermWeight } from './weights.js';

// The term index (pattern_terms: project, role, term → pattern, in the order the patterns were added,
// seq: one number per pattern; terms from core/text indexTerms, written by events/reducer addTerms):
// what finds the few patterns a text could be a near-duplicate of, or could apply, and counts how many
// patterns hold a word — without loading the role. Long posting lists are packed, one blob a term
// (pattern_postings), by the writers that read them and by `cairn maintain`.
// Over 400 lines: reading lists, estimating frequencies and packing share one command's state (TermIndex).

/** A sample of the term index holding this many of a term's rows estimates its frequency well enough. */
const COUNTED = 64;
/** A role of up to this many patterns is counted exactly (on patterns_role: a few hundred pages at most). */
const ROLE_EXACT = 16_384;
/** A sample of ids holding this many of the role's patterns estimates its size well enough. */
const ROLE_COUNTED = 1024;
/**
 * How many stems beyond the prefix a near-duplicate lookup reads: each adds a posting list and cuts
 * the candidates it returns; and up to this many more whose lists cost next to nothing to read (packed,
 * or read already). Measured in docs/decisions.md.
 */
const WINDOW_BEYOND_PREFIX = 3;
const CHEAP_BEYOND_WINDOW = 3;
/**
 * A posting holds its pattern's seq (up to 2^31 term rows) and size (its distinct words, counted up
 * to this: a larger size counted as this only lets more candidates through).
 */
export const SIZE_CAP = 65_535;
/**
 * A near-duplicate lookup counts a pattern's stems in a byte: at most this many (an item of 500 characters has
 * fewer).
 */
const COUNTED_STEMS = 255;
/** Postings a TermIndex holds read at most (6 bytes each): beyond, it forgets those it holds. */
const POSTINGS_HELD = 1_000_000;
/**
 * A posting list this long is packed once a command has read it from the index, and packed again once
 * this many postings (and a quarter of the list) have been added since: one blob reads several times
 * faster than its rows.
 */
export const PACKED_POSTINGS_MIN = 256;

type Row = { id: string; text: string };

// How common each term is decides which of a text's words are read first (prefix filtering holds for
// any order) and how much a word weighs, so an estimate serves: the index keeps each term's rows in the
// order they were added (seq), so the rows added last, the last 1/16, 1/256, … of all term rows, are a
// sample of the role that one index range reads.
const SAMPLE_LEVELS = 4;

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
 * Whether the term index is built: a first replay sets it aside and builds it at its end, in the background for a
 * large log (lib/events/log.ts).
 */
export function termIndexBuilt(db: Database): boolean {
  return (
    statement(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'pattern_terms_key'").get() !== undefined
  );
}

/** How many term rows the store holds (every project's): what a lookup would read without the index. */
export function termRows(db: Database): number {
  return (statement(db, 'SELECT IFNULL(MAX(rowid), 0) AS n FROM pattern_terms').get() as { n: number }).n;
}

/**
 * One role's term index, for one command's lookups. The texts of a deliberation share most of their
 * words: each word's frequency is estimated once. The estimates live no longer than this object, so
 * what a lookup returns depends only on the database, never on what the process did before.
 */
export class TermIndex implements TermStatistics {
  private readonly estimates = new Map<string, number>();
  /** The posting lists this command has read, by term. */
  private readonly readLists = new Map<string, Postings>();
  private postingsHeld = 0;
  /** Lists read from the index that pattern_postings lacks, or holds too short: packWhatWasRead writes them. */
  private readonly toPack = new Map<string, { list: Postings; through: number; last: string }>();
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
  ) {}

  /** An estimate of how many of the role's patterns hold each term (0: none does). */
  documentFrequency(terms: string[]): Map<string, number> {
    const unknown = [...new Set(terms)].filter((t) => !this.estimates.has(t));
    if (unknown.length) this.estimate(unknown);
    return new Map(terms.map((t) => [t, this.estimates.get(t)!]));
  }

  /**
   * Count each term up to COUNTED rows in the last 1/4096 of the index, 1/256, 1/16 and the whole: a
   * term with fewer rows than that is counted exactly, a common one from the largest sample it does
   * not fill, so that no term costs more than a few hundred index entries. One statement per sample
   * for every term still unsettled, from the smallest sample up: a common term is read in the small
   * samples only.
   */
  private estimate(terms: string[]): void {
    if (!this.samples) {
      const last = termRows(this.db);
      this.samples = Array.from({ length: SAMPLE_LEVELS }, (_, level) =>
        level === 0 ? 0 : Math.floor(last - last / 16 ** level) + 1,
      );
    }
    const count = statement(
      this.db,
      `SELECT value AS term, (SELECT COUNT(*) FROM (SELECT 1 FROM pattern_terms
         WHERE project = @project AND role = @role AND term = value AND seq >= @since LIMIT ${COUNTED})) AS n
       FROM json_each(@terms)`,
    );
    // a term's estimate comes from the largest sample it does not fill: the one below the first it fills
    // (the samples are nested)
    const scaled = (n: number, level: number) =>
      Math.max(n * 16 ** level, level === 0 ? 0 : COUNTED * 16 ** (level - 1));
    const below = new Map<string, number>();
    let left = terms;
    for (let level = SAMPLE_LEVELS - 1; level >= 0 && left.length; level--) {
      const since = this.samples[level];
      const rows = count.all({ project: this.project, role: this.role, since, terms: JSON.stringify(left) }) as {
        term: string;
        n: number;
      }[];
      left = [];
      for (const { term, n } of rows) {
        // a term that fills the smallest sample is at least that common
        if (n >= COUNTED)
          this.estimates.set(
            term,
            level === SAMPLE_LEVELS - 1 ? scaled(n, level) : scaled(below.get(term)!, level + 1),
          );
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
      return statement(
        db,
        'SELECT id, text FROM patterns WHERE project = ? AND role = ? AND ntok BETWEEN ? AND ? ORDER BY id',
      ).all(project, role, least, most) as Row[];
    }
    const holding = this.documentFrequency(stems);
    stems.sort((a, b) => holding.get(a)! - holding.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
    const version = databaseVersion(db);
    if (version !== this.postingsVersion) this.forgetPostings(version);
    const window = stems.slice(0, Math.min(stems.length, prefix + WINDOW_BEYOND_PREFIX, COUNTED_STEMS));
    // any w of the text's stems bound the count as below, so the window may take cheap lists further on
    const further = stems.slice(
      window.length,
      Math.min(stems.length, window.length + CHEAP_BEYOND_WINDOW, COUNTED_STEMS),
    );
    window.push(...further.filter((term) => this.cheapToRead(term)));
    // how many of the window's stems a pattern of each near size must hold (at least one: the prefix);
    // 0, which a count never equals once raised, for any other size
    const needed = new Uint8Array(SIZE_CAP + 1);
    for (let m = least; m <= Math.min(most, SIZE_CAP); m++) {
      needed[m] = Math.max(1, Math.ceil((threshold * (n + m)) / (1 + threshold) - 1e-9) - n + window.length);
    }
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
      `SELECT p.id, p.text FROM json_each(?) c
         CROSS JOIN pattern_terms t ON t.project = ? AND t.role = ? AND t.term = c.value ->> 0 AND t.seq = c.value ->> 1
         CROSS JOIN patterns p ON p.project = t.project AND p.id = t.pattern ORDER BY p.id`,
    ).all(JSON.stringify(candidates), project, role) as Row[];
  }

  /**
   * A term's postings in the role, in the order they were added, each its pattern's seq and size.
   * The texts of a deliberation share many of their rarer words: each list is read once per command,
   * within a bound.
   */
  postings(term: string): Postings {
    let list = this.readLists.get(term);
    if (list) return list;
    // the packed list and the postings added since in one snapshot
    list = this.db.inTransaction ? this.readPostings(term) : this.db.transaction(() => this.readPostings(term))();
    if (this.postingsHeld + list.seqs.length > POSTINGS_HELD) this.forgetPostings(this.postingsVersion);
    this.readLists.set(term, list);
    this.postingsHeld += list.seqs.length;
    return list;
  }

  /**
   * The postings packed up to a seq (`through`), and those added since from the index. A packed list
   * counts only while its last posting is still in the index as it was (seq and pattern): a replay that
   * numbered the postings differently (a merged log) makes it stale, and it is read whole again. Term
   * rows are only ever added after every row there (seq grows) or all removed (a replay), so the
   * postings up to that seq are the ones packed.
   */
  private readPostings(term: string): Postings {
    const { db, project, role } = this;
    const packed = statement(
      db,
      'SELECT through, last, postings FROM pattern_postings WHERE project = ? AND role = ? AND term = ?',
    ).get(project, role, term) as { through: number; last: string; postings: Buffer } | undefined;
    const stillTrue = (p: NonNullable<typeof packed>) =>
      p.postings.length % POSTING_BYTES === 0 &&
      statement(
        db,
        'SELECT 1 FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq = ? AND pattern = ?',
      ).get(project, role, term, p.through, p.last) !== undefined;
    const head = packed && stillTrue(packed) ? unpack(packed.postings) : undefined;
    // seq and size in one number per row (one column reads fastest)
    const since = statement(
      db,
      `SELECT seq * ${SIZE_CAP + 1} + MIN(ntok, ${SIZE_CAP}) FROM pattern_terms
        WHERE project = ? AND role = ? AND term = ? AND seq > ?`,
    ).pluck();
    const added = since.all(project, role, term, head ? packed!.through : 0) as number[];
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
    if (added.length >= Math.max(PACKED_POSTINGS_MIN, from / 4)) {
      const through = list.seqs[list.seqs.length - 1];
      const last = statement(
        db,
        'SELECT pattern FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq = ?',
      )
        .pluck()
        .get(project, role, term, through) as string;
      this.toPack.set(term, { list, through, last });
    }
    return list;
  }

  /**
   * Pack the long lists this command read from the index, so that the next command reads each as one
   * blob. A cache: it waits for no lock (a busy database packs nothing), and every reader checks what
   * it reads.
   */
  packWhatWasRead(): void {
    if (this.toPack.size === 0) return;
    const patience = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma('busy_timeout = 0');
    try {
      this.writePacked();
    } catch (err) {
      if (!isBusy(err)) throw err;
    } finally {
      this.db.pragma(`busy_timeout = ${patience}`);
      this.toPack.clear();
    }
  }

  /** Pack each of these terms' lists where it is not packed, or is stale (cairn maintain); the number written. */
  packLists(terms: string[]): number {
    let written = 0;
    let held = 0;
    for (const term of terms) {
      const before = this.toPack.size;
      this.db.transaction(() => this.readPostings(term))();
      if (this.toPack.size > before) held += this.toPack.get(term)!.list.seqs.length;
      if (held > POSTINGS_HELD) {
        written += this.writePacked();
        held = 0;
      }
    }
    return written + this.writePacked();
  }

  private writePacked(): number {
    const { db, project, role, toPack } = this;
    const write = statement(
      db,
      `INSERT OR REPLACE INTO pattern_postings (project, role, term, through, last, postings)
        VALUES (?, ?, ?, ?, ?, ?)`,
    );
    db.transaction(() => {
      for (const [term, { list, through, last }] of toPack) write.run(project, role, term, through, last, pack(list));
    }).immediate();
    const written = toPack.size;
    toPack.clear();
    return written;
  }

  /** Whether a term's list is read already, or packed (a tenth of the cost of reading it from the index). */
  private cheapToRead(term: string): boolean {
    if (this.readLists.has(term)) return true;
    return (
      statement(this.db, 'SELECT 1 FROM pattern_postings WHERE project = ? AND role = ? AND term = ?').get(
        this.project,
        this.role,
        term,
      ) !== undefined
    );
  }

  private forgetPostings(version: string): void {
    this.readLists.clear();
    this.postingsHeld = 0;
    this.postingsVersion = version;
  }

  /** How rare each term is among the role's patterns, from the estimates (./weights.ts termWeights). */
  weights(texts: string[]): TermWeight {
    return termWeights(this, texts);
  }

  /**
   * How many patterns the role holds, and their mean length: exact up to ROLE_EXACT, else estimated
   * from the role's patterns among the ids that start with 'p00' or 'p000' (ids are hashes: a 1/256
   * or 1/4096 sample of the project). The 1/256 sample is read first and tells a small role, which is
   * then counted whole, from a large one, so that sizing a large role reads a few hundred rows.
   */
  size(): { patterns: number; meanLength: number } {
    const exact = statement(
      this.db,
      `SELECT COUNT(*) AS n, IFNULL(SUM(ntok), 0) AS length
        FROM (SELECT ntok FROM patterns WHERE project = ? AND role = ? LIMIT ${ROLE_EXACT})`,
    );
    const sample = statement(
      this.db,
      `SELECT COUNT(*) AS n, IFNULL(SUM(ntok), 0) AS length FROM (SELECT ntok FROM patterns
         WHERE project = ? AND id >= ? AND id < ? AND role = ? LIMIT ${ROLE_COUNTED})`,
    );
    const size = (n: number, length: number, scale: number) => ({
      patterns: n * scale,
      meanLength: n ? length / n : 1,
    });
    const sampled = (level: number) => {
      const prefix = 'p' + '0'.repeat(level);
      const { n, length } = sample.get(this.project, prefix, prefix.slice(0, -1) + '1', this.role) as {
        n: number;
        length: number;
      };
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

  /**
   * The role's patterns that share the most of a text's rarest content words, best first (ties by id): link
   * candidates (SPEC §3.9.1).
   */
  sharing(text: string, limit: number): Row[] {
    const rarest = rarestTerms(this, text);
    if (rarest.length === 0) return [];
    return statement(
      this.db,
      `SELECT p.id, p.text FROM (SELECT pattern, COUNT(*) AS shared FROM pattern_terms
         WHERE project = ? AND role = ? AND term IN (${rarest.map(() => '?').join(', ')})
         GROUP BY seq ORDER BY shared DESC, pattern LIMIT ?)
          s CROSS JOIN patterns p ON p.project = ? AND p.id = s.pattern ORDER BY s.shared DESC, p.id`,
    ).all(this.project, this.role, ...rarest, limit, this.project) as Row[];
  }
}

/**
 * Every long posting list of the project's term index packed, so that the writers' near-duplicate
 * lookups read each as one blob (they keep up to date what they read); the number of lists written.
 */
export function packLongLists(db: Database, project: string): number {
  const long = db
    .prepare(
      `SELECT role, term FROM pattern_terms WHERE project = ? GROUP BY role, term
        HAVING COUNT(*) >= ${PACKED_POSTINGS_MIN} ORDER BY role, term`,
    )
    .all(project) as { role: string; term: string }[];
  let written = 0;
  for (const role of new Set(long.map((r) => r.role))) {
    written += new TermIndex(db, project, role).packLists(long.filter((r) => r.role === role).map((r) => r.term));
  }
  return written;
}

// A packed list is its seqs (4 bytes each), then its sizes (2 bytes each), in this machine's byte order:
// the database is this machine's cache.
function pack({ seqs, sizes }: Postings): Buffer {
  const bytes = Buffer.allocUnsafe(seqs.byteLength + sizes.byteLength);
  bytes.set(new Uint8Array(seqs.buffer, seqs.byteOffset, seqs.byteLength), 0);
  bytes.set(new Uint8Array(sizes.buffer, sizes.byteOffset, sizes.byteLength), seqs.byteLength);
  return bytes;
}

const POSTING_BYTES = Int32Array.BYTES_PER_ELEMENT + Uint16Array.BYTES_PER_ELEMENT;

function unpack(blob: Buffer): Postings {
  // a view needs aligned bytes
  const bytes = blob.byteOffset % Int32Array.BYTES_PER_ELEMENT === 0 ? blob : new Uint8Array(blob);
  const n = bytes.byteLength / POSTING_BYTES;
  return {
    seqs: new Int32Array(bytes.buffer, bytes.byteOffset, n),
    sizes: new Uint16Array(bytes.buffer, bytes.byteOffset + n * Int32Array.BYTES_PER_ELEMENT, n),
  };
}
