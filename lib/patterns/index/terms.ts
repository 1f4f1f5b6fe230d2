import type { Statement } from 'better-sqlite3';
import { databaseVersion, isBusy, type Database } from '../../store/db.js';
import { indexTerms } from '../../core/text.js';
import { postingCounter, type PostingCounter, type Postings } from './posting-count.js';
import { rarestTerms, termWeights, type TermStatistics, type TermWeight } from './weights.js';

// The term index (pattern_terms, written by events/reducer addTerms; ./README.md).

const COUNTED = 64;
/** Counted exactly up to this (on patterns_role: a few hundred pages at most). */
const ROLE_EXACT = 16_384;
const ROLE_COUNTED = 1024;
/** Stems read beyond the prefix, and more whose lists are cheap (docs/decisions.md). */
const WINDOW_BEYOND_PREFIX = 3;
const CHEAP_BEYOND_WINDOW = 3;
/** A larger size only lets more candidates through. */
export const SIZE_CAP = 65_535;
/** Counted in a byte (an item of 500 characters has fewer stems). */
const COUNTED_STEMS = 255;
/** 6 bytes each; beyond, a TermIndex forgets those it holds. */
const POSTINGS_HELD = 1_000_000;
/** Packed once read, and again once this many (and a quarter more) are added. */
export const PACKED_POSTINGS_MIN = 256;

type Row = { id: string; text: string };

// Frequencies only order and weigh words (prefix filtering holds in any order): the last 1/16, 1/256, … rows serve.
const SAMPLE_LEVELS = 4;

// a writer asks the same few queries once per text of a deliberation
const prepared = new WeakMap<Database, Map<string, Statement<unknown[]>>>();
function statement(db: Database, sql: string): Statement<unknown[]> {
  let byText = prepared.get(db);
  if (!byText) prepared.set(db, (byText = new Map()));
  let s = byText.get(sql);
  if (!s) byText.set(sql, (s = db.prepare(sql)));
  return s;
}

export function termIndexBuilt(db: Database): boolean {
  return statement(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'pattern_terms_key'").get() !== undefined;
}

export function termRows(db: Database): number {
  return (statement(db, 'SELECT IFNULL(MAX(rowid), 0) AS n FROM pattern_terms').get() as { n: number }).n;
}

/** Estimates live no longer than it, so an answer depends only on the database. */
export class TermIndex implements TermStatistics {
  private readonly estimates = new Map<string, number>();
  private readonly readLists = new Map<string, Postings>();
  private postingsHeld = 0;
  /** Lists pattern_postings lacks or holds too short. */
  private readonly toPack = new Map<string, { list: Postings; through: number; last: string }>();
  /** A command may write between its lookups. */
  private postingsVersion = '';
  private counter?: PostingCounter;
  /** Each sample's first seq. */
  private samples?: number[];

  constructor(
    private readonly db: Database,
    private readonly project: string,
    readonly role: string,
  ) {}

  documentFrequency(terms: string[]): Map<string, number> {
    const unknown = [...new Set(terms)].filter((t) => !this.estimates.has(t));
    if (unknown.length) this.estimate(unknown);
    return new Map(terms.map((t) => [t, this.estimates.get(t)!]));
  }

  /** Nested samples, smallest first: a rare term exact, a common one from the largest it does not fill. */
  private estimate(terms: string[]): void {
    if (!this.samples) {
      const last = termRows(this.db);
      this.samples = Array.from({ length: SAMPLE_LEVELS }, (_, level) => (level === 0 ? 0 : Math.floor(last - last / 16 ** level) + 1));
    }
    const count = statement(
      this.db,
      `SELECT value AS term, (SELECT COUNT(*) FROM (SELECT 1 FROM pattern_terms
         WHERE project = @project AND role = @role AND term = value AND seq >= @since LIMIT ${COUNTED})) AS n
       FROM json_each(@terms)`,
    );
    const scaled = (n: number, level: number) => Math.max(n * 16 ** level, level === 0 ? 0 : COUNTED * 16 ** (level - 1));
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
        if (n >= COUNTED) this.estimates.set(term, level === SAMPLE_LEVELS - 1 ? scaled(n, level) : scaled(below.get(term)!, level + 1));
        else if (level === 0) this.estimates.set(term, n);
        else {
          below.set(term, n);
          left.push(term);
        }
      }
    }
  }

  /** Prefix filtering (./README.md): a pattern of m terms shares k = ⌈t·(n + m)/(1 + t)⌉, so k − n + w of any w terms. */
  nearDuplicates(text: string, threshold: number): Row[] {
    const { db, project, role } = this;
    const stems = indexTerms(text).terms;
    const n = stems.length;
    if (n === 0) return [];
    const [least, most] = [Math.ceil(threshold * n - 1e-9), Math.floor(n / threshold + 1e-9)];
    const prefix = n - least + 1;
    if (prefix > COUNTED_STEMS) {
      // far longer than an item (rare): every pattern of a near size
      return statement(db, 'SELECT id, text FROM patterns WHERE project = ? AND role = ? AND ntok BETWEEN ? AND ? ORDER BY id').all(
        project,
        role,
        least,
        most,
      ) as Row[];
    }
    const holding = this.documentFrequency(stems);
    stems.sort((a, b) => holding.get(a)! - holding.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
    const version = databaseVersion(db);
    if (version !== this.postingsVersion) this.forgetPostings(version);
    const window = stems.slice(0, Math.min(stems.length, prefix + WINDOW_BEYOND_PREFIX, COUNTED_STEMS));
    // any w stems bound the count, so the window may take cheap lists further on
    const further = stems.slice(window.length, Math.min(stems.length, window.length + CHEAP_BEYOND_WINDOW, COUNTED_STEMS));
    window.push(...further.filter((term) => this.cheapToRead(term)));
    // by size: how many window stems a pattern must hold (0: not a near size)
    const needed = new Uint8Array(SIZE_CAP + 1);
    for (let m = least; m <= Math.min(most, SIZE_CAP); m++) {
      needed[m] = Math.max(1, Math.ceil((threshold * (n + m)) / (1 + threshold) - 1e-9) - n + window.length);
    }
    const lists = window.map((term) => this.postings(term));
    const candidates: [string, number][] = [];
    (this.counter ??= postingCounter()).reached(lists, needed).forEach((found, place) => {
      for (const seq of found) candidates.push([window[place], seq]);
    });
    if (candidates.length === 0) return [];
    // CROSS JOIN keeps the join order
    return statement(
      db,
      `SELECT p.id, p.text FROM json_each(?) c
         CROSS JOIN pattern_terms t ON t.project = ? AND t.role = ? AND t.term = c.value ->> 0 AND t.seq = c.value ->> 1
         CROSS JOIN patterns p ON p.project = t.project AND p.id = t.pattern ORDER BY p.id`,
    ).all(JSON.stringify(candidates), project, role) as Row[];
  }

  /** In the order they were added; read once per command, within a bound. */
  postings(term: string): Postings {
    let list = this.readLists.get(term);
    if (list) return list;
    // packed list and postings added since in one snapshot
    list = this.db.inTransaction ? this.readPostings(term) : this.db.transaction(() => this.readPostings(term))();
    if (this.postingsHeld + list.seqs.length > POSTINGS_HELD) this.forgetPostings(this.postingsVersion);
    this.readLists.set(term, list);
    this.postingsHeld += list.seqs.length;
    return list;
  }

  /** A packed list counts while its last posting stands: term rows are only appended, or all replaced. */
  private readPostings(term: string): Postings {
    const { db, project, role } = this;
    const packed = statement(db, 'SELECT through, last, postings FROM pattern_postings WHERE project = ? AND role = ? AND term = ?').get(
      project,
      role,
      term,
    ) as { through: number; last: string; postings: Buffer } | undefined;
    const stillTrue = (p: NonNullable<typeof packed>) =>
      p.postings.length % POSTING_BYTES === 0 &&
      statement(db, 'SELECT 1 FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq = ? AND pattern = ?').get(
        project,
        role,
        term,
        p.through,
        p.last,
      ) !== undefined;
    const head = packed && stillTrue(packed) ? unpack(packed.postings) : undefined;
    // one column reads fastest
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
      const last = statement(db, 'SELECT pattern FROM pattern_terms WHERE project = ? AND role = ? AND term = ? AND seq = ?')
        .pluck()
        .get(project, role, term, through) as string;
      this.toPack.set(term, { list, through, last });
    }
    return list;
  }

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

  /** Where unpacked or stale (cairn maintain); the number written. */
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

  weights(texts: string[]): TermWeight {
    return termWeights(this, texts);
  }

  /** Exact up to ROLE_EXACT, else from ids starting 'p00' or 'p000' (hashes: 1/256, 1/4096 samples). */
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

// seqs, then sizes, in this machine's byte order (its own cache)
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
