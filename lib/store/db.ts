import { createRequire } from 'node:module';
import { existsSync, lstatSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CairnError, IndexCatchingUp } from '../core/errors.js';
import { mkdirNoFollow } from '../io/safe.js';
import { recordFailure } from './health.js';
import { sleepSync, type Deadline } from '../core/deadline.js';

export type Database = BetterSqlite3.Database;

// The one place that opens SQLite. better-sqlite3's JavaScript is bundled with the executables
// (tools/bundle.js); its native addon — the heavy part — is loaded when a database is first opened,
// so a hook that never needs one never pays for it, and a machine where the addon failed to build
// fails open.
const require = createRequire(import.meta.url);

type Driver = typeof BetterSqlite3;
let driver: Driver | undefined;

export function loadDriver(): Driver {
  return (driver ??= nativeDriver());
}

function nativeDriver(): Driver {
  try {
    let addon: unknown;
    try {
      // where npm builds (or downloads) it: loaded directly, without the `bindings` package's search
      addon = require(require.resolve('better-sqlite3/build/Release/better_sqlite3.node'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
      return require('better-sqlite3') as Driver; // anywhere else: the package finds it itself
    }
    return class extends BetterSqlite3 {
      constructor(filename?: string | Buffer, options?: BetterSqlite3.Options) {
        // the addon itself: better-sqlite3 takes it as well as a path (its types know only the path)
        super(filename, { ...options, nativeBinding: addon as string });
      }
    } as Driver;
  } catch (err) {
    throw new CairnError('database', `better-sqlite3 is not loadable (${(err as Error).message.split('\n')[0]})`);
  }
}

/**
 * The columns a pattern's base score reads (lib/patterns/scoring.ts baseScoreSql, with role and id in
 * every index of patterns): the indexes a ranking reads hold them, so that it reads no row of the
 * table, each of which was a page of its own (1,475 rows of a rank index at 100k patterns: 16–24 ms
 * through the table, 8–9 ms from the index alone; 1,280 of a query's matches: 16–21 ms, 6–9 ms).
 */
const BASE_COLUMNS = 'success_count, ignore_count, ignore_weight, reinforcement_count, lifecycle, category, last_used, labels, files, phases';

/**
 * The secondary indexes of the event log's tables that only readers use (the reducer reads none of
 * them; it does read sightings_scope and deliberations_text, which stay): a full replay drops them
 * (every insert and update would maintain them, row by row, in random order) and builds them again
 * once at its end, which is several times faster (lib/events/log.ts, bench/README.md). The rank
 * indexes' expressions are lib/patterns/scoring.ts DECAYING_KEY_SQL and IMMUNE_KEY_SQL, verbatim.
 */
export const EVENT_LOG_INDEXES: Record<string, string> = {
  // each term's postings in the order their patterns were added (seq): a new pattern's terms go at the
  // end of their terms' ranges, not at random places of the whole index (issue 8, the migrations below),
  // and readers group a term's postings by seq, in the order the index gives them; with the pattern's
  // length (ntok), so that BM25 and the near-duplicates' size filter read the index alone
  pattern_terms_key: 'CREATE UNIQUE INDEX pattern_terms_key ON pattern_terms (project, role, term, seq, pattern, ntok)',
  patterns_role: 'CREATE INDEX patterns_role ON patterns (project, role, ntok)',
  deliberations_scope: 'CREATE INDEX deliberations_scope ON deliberations (project, role, issue, run, ts)',
  injections_scope: 'CREATE INDEX injections_scope ON injections (project, issue, run, role)',
  links_scope: 'CREATE INDEX links_scope ON links (project, issue, run, role)',
  patterns_rank_decaying: `CREATE INDEX patterns_rank_decaying ON patterns (project, role, (ln(((MAX(0, success_count) + 1.0) / (MAX(0, success_count) + CASE WHEN ignore_weight > 0 THEN ignore_weight ELSE ignore_count END + 2.0) * CASE category WHEN 'rule' THEN 1.3 WHEN 'causal' THEN 1.1 WHEN 'observation' THEN 1 ELSE 1.0 END)) + last_used / 1209600000.0), term_seq, ${BASE_COLUMNS})
     WHERE lifecycle NOT IN ('deprecated', 'active') AND reinforcement_count < 3`,
  patterns_rank_immune: `CREATE INDEX patterns_rank_immune ON patterns (project, role, (ln(((MAX(0, success_count) + 1.0) / (MAX(0, success_count) + CASE WHEN ignore_weight > 0 THEN ignore_weight ELSE ignore_count END + 2.0) * CASE category WHEN 'rule' THEN 1.3 WHEN 'causal' THEN 1.1 WHEN 'observation' THEN 1 ELSE 1.0 END))), term_seq, ${BASE_COLUMNS})
     WHERE lifecycle != 'deprecated' AND (lifecycle = 'active' OR reinforcement_count >= 3)`,
  // a query's matches' patterns by where their postings start (lib/patterns/ranking.ts bestMatches); with
  // id_bits, a summary's basis (candidateDigest) reads it alone, not the table (118 → 99 ms at 100k)
  patterns_seq: `CREATE INDEX patterns_seq ON patterns (project, term_seq, role, ${BASE_COLUMNS}, id_bits)`,
  // a summary's newest candidates: the patterns first seen since it was stored (lib/patterns/ranking.ts newCandidateSince)
  patterns_first_seen: 'CREATE INDEX patterns_first_seen ON patterns (project, role, first_seen)',
  // the few deprecated patterns, which BM25 over the term index leaves out (lib/patterns/ranking.ts)
  patterns_deprecated: "CREATE INDEX patterns_deprecated ON patterns (project, role, id) WHERE lifecycle = 'deprecated'",
};

/** idBits (lib/core/ids.ts) in SQL. */
export const ID_BITS_SQL = `(${Array.from({ length: 10 }, (_, k) => `(instr('0123456789abcdef', substr(id, ${k + 2}, 1)) - 1) * ${16 ** (9 - k)}`).join(' + ')})`;

// Schema migrations by user_version: append, never edit a shipped step. A step is SQL, or a function
// where what it does depends on the database's state.
const MIGRATIONS: (string | ((db: Database) => void))[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE patterns (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    ntok INTEGER NOT NULL,
    category TEXT NOT NULL,
    success_count REAL NOT NULL DEFAULT 0,
    ignore_count INTEGER NOT NULL DEFAULT 0,
    ignore_weight REAL NOT NULL DEFAULT 0,
    reinforcement_count INTEGER NOT NULL DEFAULT 0,
    sightings INTEGER NOT NULL DEFAULT 0,
    was_validated INTEGER NOT NULL DEFAULT 0,
    regressed INTEGER NOT NULL DEFAULT 0,
    lifecycle TEXT NOT NULL DEFAULT 'observed',
    first_seen TEXT NOT NULL,
    last_used INTEGER NOT NULL,
    labels TEXT NOT NULL DEFAULT '[]',
    files TEXT NOT NULL DEFAULT '[]',
    phases TEXT NOT NULL DEFAULT '[]',
    issues TEXT NOT NULL DEFAULT '[]',
    promoted_by TEXT,
    reason TEXT,
    PRIMARY KEY (project, id)
  ) WITHOUT ROWID;
  CREATE INDEX patterns_role ON patterns (project, role, ntok);
  CREATE TABLE deliberations (
    project TEXT NOT NULL, id TEXT NOT NULL, ts TEXT NOT NULL, role TEXT NOT NULL,
    issue TEXT NOT NULL, run TEXT NOT NULL, phase TEXT, iteration INTEGER,
    labels TEXT NOT NULL, files TEXT NOT NULL, verdict TEXT, evidence TEXT NOT NULL,
    text_hash TEXT NOT NULL, size INTEGER NOT NULL, path TEXT NOT NULL,
    PRIMARY KEY (project, id)
  );
  CREATE INDEX deliberations_scope ON deliberations (project, role, issue, run, ts);
  -- which deliberation sighting added a success to which pattern (echo and retraction, SPEC §3.3, §3.7)
  CREATE TABLE sightings (
    project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, role TEXT NOT NULL, pattern TEXT NOT NULL,
    deliberation TEXT NOT NULL, added_success INTEGER NOT NULL, retracted INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX sightings_scope ON sightings (project, issue, run, pattern);
  CREATE TABLE injections (
    project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, role TEXT NOT NULL, pattern TEXT NOT NULL,
    event TEXT NOT NULL, ts TEXT NOT NULL
  );
  CREATE INDEX injections_scope ON injections (project, issue, run, role);
  CREATE TABLE dismissals (
    project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, pattern TEXT NOT NULL, finding TEXT,
    PRIMARY KEY (project, issue, run, pattern)
  );
  CREATE TABLE outcomes (
    project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, result TEXT NOT NULL, ts TEXT NOT NULL,
    PRIMARY KEY (project, issue, run)
  );
  CREATE TABLE summaries (
    project TEXT NOT NULL, role TEXT NOT NULL, basis TEXT NOT NULL, text TEXT NOT NULL, ts TEXT NOT NULL,
    PRIMARY KEY (project, role)
  );
  -- token counts survive rebuilds: they depend only on text and encoding
  CREATE TABLE token_counts (key TEXT PRIMARY KEY, tokens INTEGER NOT NULL) WITHOUT ROWID;
  -- embedding vectors (Float32) survive rebuilds too: key = hash of provider command and text (SPEC §6)
  CREATE TABLE embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
  CREATE VIRTUAL TABLE patterns_fts USING fts5 (text, project UNINDEXED, pid UNINDEXED, tokenize = 'porter unicode61');
  `,
  // an outcome may be recorded in several events of one grading
  `ALTER TABLE outcomes ADD COLUMN grading TEXT;`,
  // a pattern is reinforced, or aged, at most once per issue/run
  `CREATE TABLE run_marks (project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, pattern TEXT NOT NULL, kind TEXT NOT NULL,
     PRIMARY KEY (project, issue, run, pattern, kind)) WITHOUT ROWID;`,
  // the knowledge index (SPEC §4.3, lib/knowledge/index.ts): one row per line of knowledge.jsonl, its
  // archive and the active cache; a line's version (key + normalised content) lets a later line replace it
  `CREATE TABLE knowledge (
     id INTEGER PRIMARY KEY,
     source INTEGER NOT NULL,   -- 0 archive, 1 log, 2 active cache
     seq INTEGER NOT NULL,      -- order within the raw logs (archive first) or within the active cache
     version TEXT NOT NULL,
     project TEXT NOT NULL,     -- '' for lines written without one: visible to every reader of the store
     key TEXT NOT NULL, type TEXT NOT NULL, content TEXT NOT NULL, tags TEXT NOT NULL, bead TEXT NOT NULL,
     ts INTEGER NOT NULL, status TEXT, noise INTEGER NOT NULL);
   CREATE INDEX knowledge_version ON knowledge (version, seq);
   CREATE INDEX knowledge_recent ON knowledge (source, ts);
   CREATE VIRTUAL TABLE knowledge_fts USING fts5 (content, tags, type, key, content = 'knowledge', content_rowid = 'id', tokenize = 'porter unicode61');`,
  // findings linked to the patterns they apply (SPEC §3.9.1); a retried store of the same text is a duplicate (§3.9.4)
  `CREATE TABLE links (project TEXT NOT NULL, deliberation TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, role TEXT NOT NULL,
     finding TEXT NOT NULL, pattern TEXT NOT NULL, match TEXT NOT NULL, summary TEXT NOT NULL,
     PRIMARY KEY (project, deliberation, finding, pattern)) WITHOUT ROWID;
   CREATE INDEX links_scope ON links (project, issue, run, role);
   ALTER TABLE deliberations ADD COLUMN duplicate_of TEXT;
   CREATE INDEX deliberations_text ON deliberations (project, role, issue, run, text_hash);`,
  // issue 8: a term index per project and role (near-duplicates, link candidates, per-project BM25)
  // replaces patterns_fts; two rank indexes order each role's patterns as the score does (their
  // expressions are lib/patterns/scoring.ts DECAYING_KEY_SQL and IMMUNE_KEY_SQL, verbatim). The terms
  // of the patterns already indexed are only in the log: the pattern tables are emptied and replayed.
  `CREATE TABLE pattern_terms (project TEXT NOT NULL, role TEXT NOT NULL, term TEXT NOT NULL, pattern TEXT NOT NULL,
     PRIMARY KEY (project, role, term, pattern)) WITHOUT ROWID;
   DROP TABLE patterns_fts;
   CREATE INDEX patterns_rank_decaying ON patterns (project, role, (ln(((MAX(0, success_count) + 1.0) / (MAX(0, success_count) + CASE WHEN ignore_weight > 0 THEN ignore_weight ELSE ignore_count END + 2.0) * CASE category WHEN 'rule' THEN 1.3 WHEN 'causal' THEN 1.1 WHEN 'observation' THEN 1 ELSE 1.0 END)) + last_used / 1209600000.0))
     WHERE lifecycle NOT IN ('deprecated', 'active') AND reinforcement_count < 3;
   CREATE INDEX patterns_rank_immune ON patterns (project, role, (ln(((MAX(0, success_count) + 1.0) / (MAX(0, success_count) + CASE WHEN ignore_weight > 0 THEN ignore_weight ELSE ignore_count END + 2.0) * CASE category WHEN 'rule' THEN 1.3 WHEN 'causal' THEN 1.1 WHEN 'observation' THEN 1 ELSE 1.0 END))))
     WHERE lifecycle != 'deprecated' AND (lifecycle = 'active' OR reinforcement_count >= 3);
   DELETE FROM patterns; DELETE FROM deliberations; DELETE FROM sightings; DELETE FROM injections; DELETE FROM dismissals;
   DELETE FROM outcomes; DELETE FROM summaries; DELETE FROM run_marks; DELETE FROM links;
   DELETE FROM meta WHERE key = 'log:events';`,
  // auto-recall's working set (lib/knowledge/index.ts): the newest lines of the log and of the active
  // cache in an FTS table of their own, with the list of rows it holds; statuses and keys indexed; the
  // token count of each entry's line in the auto-recall block, once counted (lib/knowledge/auto-recall.ts)
  `CREATE VIRTUAL TABLE knowledge_newest_fts USING fts5 (content, tags, type, key, source, content = 'knowledge', content_rowid = 'id', tokenize = 'porter unicode61');
   CREATE TABLE knowledge_newest (id INTEGER PRIMARY KEY, source INTEGER NOT NULL);
   CREATE INDEX knowledge_newest_source ON knowledge_newest (source, id);
   CREATE INDEX knowledge_source ON knowledge (source, id);
   CREATE INDEX knowledge_status ON knowledge (status) WHERE status IS NOT NULL;
   CREATE INDEX knowledge_key ON knowledge (key);
   ALTER TABLE knowledge ADD COLUMN recall_key TEXT;
   ALTER TABLE knowledge ADD COLUMN recall_tokens INTEGER;`,
  // pattern_terms becomes a rowid table with its key as a separate index (EVENT_LOG_INDEXES), which a
  // full replay sets aside and builds once at its end
  `ALTER TABLE pattern_terms RENAME TO pattern_terms_keyed;
   CREATE TABLE pattern_terms (project TEXT NOT NULL, role TEXT NOT NULL, term TEXT NOT NULL, pattern TEXT NOT NULL);
   INSERT INTO pattern_terms SELECT project, role, term, pattern FROM pattern_terms_keyed;
   DROP TABLE pattern_terms_keyed;
   CREATE UNIQUE INDEX pattern_terms_key ON pattern_terms (project, role, term, pattern);`,
  // each pattern's idBits, which a summary's basis sums over the candidates (SPEC §3.5 step 4b)
  `ALTER TABLE patterns ADD COLUMN id_bits INTEGER NOT NULL DEFAULT 0;
   UPDATE patterns SET id_bits = ${ID_BITS_SQL};`,
  // a stored summary's newest first sighting, and the index that finds the patterns first seen since
  `ALTER TABLE summaries ADD COLUMN newest TEXT;
   ${EVENT_LOG_INDEXES.patterns_first_seen};`,
  // the term index keeps each term's postings in the order their patterns were added (seq: the first
  // rowid of the pattern's terms, one number per pattern). Keyed by pattern id, a hash, each new
  // pattern's ~17 rows landed on ~17 random pages of the index: 27 µs a row and a commit rewriting most
  // of what it touched (a pull of 1,000 events at 100k patterns: 0.3 s of its 0.65). seq is only in
  // the log's order, so the pattern tables are emptied and replayed, as for the term index itself.
  `DROP INDEX IF EXISTS pattern_terms_key;
   ALTER TABLE pattern_terms ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
   DELETE FROM patterns; DELETE FROM deliberations; DELETE FROM sightings; DELETE FROM injections; DELETE FROM dismissals;
   DELETE FROM outcomes; DELETE FROM summaries; DELETE FROM run_marks; DELETE FROM links; DELETE FROM pattern_terms;
   DELETE FROM meta WHERE key = 'log:events';
   CREATE UNIQUE INDEX pattern_terms_key ON pattern_terms (project, role, term, seq, pattern);`,
  // BM25 from the term index alone (issue 8): each posting holds its pattern's length, and each pattern
  // where its postings start (term_seq), so a ranking by the rank indexes can weigh a pattern's match
  // to a query in a few index lookups; the deprecated patterns are indexed apart. Both numbers are only
  // known from the log: the pattern tables are emptied and replayed.
  `DROP INDEX IF EXISTS pattern_terms_key;
   ALTER TABLE pattern_terms ADD COLUMN ntok INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE patterns ADD COLUMN term_seq INTEGER NOT NULL DEFAULT 0;
   DELETE FROM patterns; DELETE FROM deliberations; DELETE FROM sightings; DELETE FROM injections; DELETE FROM dismissals;
   DELETE FROM outcomes; DELETE FROM summaries; DELETE FROM run_marks; DELETE FROM links; DELETE FROM pattern_terms;
   DELETE FROM meta WHERE key = 'log:events';
   ${EVENT_LOG_INDEXES.pattern_terms_key};
   ${EVENT_LOG_INDEXES.patterns_deprecated};`,
  // long posting lists of the term index kept packed, one blob a term (lib/patterns/terms.ts): a cache
  // of pattern_terms that store-deliberation and cairn maintain write, and each reader checks against
  // the index; emptied with the pattern tables (a later migration that empties them empties it too)
  `CREATE TABLE pattern_postings (project TEXT NOT NULL, role TEXT NOT NULL, term TEXT NOT NULL, through INTEGER NOT NULL,
     last TEXT NOT NULL, postings BLOB NOT NULL, PRIMARY KEY (project, role, term));`,
  // the credit a pattern gained untested since a validator last tested it (passing outcomes and PASSes
  // it was applied in), which a dismissal takes back (lib/events/reducer.ts): only the log knows it, so
  // the pattern tables are emptied and replayed
  `ALTER TABLE patterns ADD COLUMN untested REAL NOT NULL DEFAULT 0;
   DELETE FROM patterns; DELETE FROM deliberations; DELETE FROM sightings; DELETE FROM injections; DELETE FROM dismissals;
   DELETE FROM outcomes; DELETE FROM summaries; DELETE FROM run_marks; DELETE FROM links; DELETE FROM pattern_terms;
   DELETE FROM pattern_postings; DELETE FROM meta WHERE key = 'log:events';`,
  // the indexes a ranking reads hold every column it reads (BASE_COLUMNS), and a query's matches are
  // found by where their postings start (term_seq): a pattern of stop-words only has none, and now
  // says so (0, lib/events/reducer.ts), where it held the next pattern's start (its first term row's
  // rowid) and was ranked with that pattern's match. Building the indexes takes ~1 s at 100k
  // patterns: a store whose event log is indexed has its log's index marked as building, and the
  // follower builds what is missing within a command's deadline, or in the background for a large
  // store (lib/store/follower.ts completeBuild); any other store builds them now (it has no rows).
  (db) => {
    db.exec(`UPDATE patterns SET term_seq = 0 WHERE term_seq != 0
       AND NOT EXISTS (SELECT 1 FROM pattern_terms t WHERE t.rowid = patterns.term_seq AND t.project = patterns.project AND t.pattern = patterns.id);
     DROP INDEX IF EXISTS patterns_rank_decaying;
     DROP INDEX IF EXISTS patterns_rank_immune;`);
    const followed = db.prepare("UPDATE meta SET value = json_set(value, '$.building', json('true')) WHERE key = 'log:events'").run().changes > 0;
    if (!followed) for (const name of ['patterns_rank_decaying', 'patterns_rank_immune', 'patterns_seq']) db.exec(EVENT_LOG_INDEXES[name]);
  },
];

/** A value that changes whenever the database does, by this connection or another: what a cache of its rows is keyed by. */
export function databaseVersion(db: Database): string {
  return `${db.pragma('data_version', { simple: true })}:${(db.prepare('SELECT total_changes() AS n').get() as { n: number }).n}`;
}

/** Tables derived from the event log (its follower empties them to rebuild); other logs own their own. */
export const EVENT_LOG_TABLES = ['patterns', 'deliberations', 'sightings', 'injections', 'dismissals', 'outcomes', 'summaries', 'run_marks', 'links', 'pattern_terms'];

export interface OpenOptions {
  deadline: Deadline;
  /** Under --strict a corrupt database is an error; otherwise it is moved aside and rebuilt. */
  strict: boolean;
  warn: (message: string) => void;
  /** The store directory: no symbolic link in it is written through (SPEC §2). */
  within: string;
}

/** The database file and the companions SQLite writes beside it. */
const COMPANIONS = ['', '-wal', '-shm', '-journal'];

export function openDatabase(path: string, opts: OpenOptions): Database {
  const Driver = loadDriver();
  mkdirNoFollow(opts.within, dirname(path));
  const unusable = unusableFile(path);
  if (unusable) {
    // SQLite would write through a link (into another database, say) or fail on a directory at every run.
    if (opts.strict) throw new CairnError('database', `${unusable}, not a database file`);
    setAside(path, opts.within, (aside) => `${unusable}; moved it to ${aside} and rebuilt from the log`, opts.warn);
  }
  try {
    return prepare(new Driver(path), opts);
  } catch (err) {
    if (!isCorruption(err)) throw asDatabaseError(err, path);
    if (opts.strict) throw new CairnError('database', `${path} is not a usable database (${(err as Error).message})`);
    const said = (aside: string) => `${path} was not a usable database; moved it to ${aside} and rebuilt from the log`;
    setAside(path, opts.within, said, opts.warn);
    try {
      return prepare(new Driver(path), opts);
    } catch (again) {
      throw asDatabaseError(again, path);
    }
  }
}

function prepare(db: Database, opts: Pick<OpenOptions, 'deadline'>): Database {
  try {
    // busy_timeout first, so that switching to WAL already waits for a concurrent opener.
    const patience = Math.max(50, opts.deadline.waitLimit());
    db.pragma(`busy_timeout = ${patience}`);
    switchToWal(db, Date.now() + patience);
    // No fsync: this file is an index that is rebuilt from the log whenever it is damaged or behind, and an
    // fsync at every commit and checkpoint would cost a hook more than all its queries.
    db.pragma('synchronous = OFF');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Two processes opening a new database at once can each hold a shared lock while wanting the exclusive
 * one the switch to WAL takes; SQLite answers SQLITE_BUSY to one of them at once rather than let the two
 * wait on each other, so busy_timeout does not help. Try again until the other has switched it.
 */
export function switchToWal(db: Database, until: number): void {
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() + wait > until) throw err;
      sleepSync(wait);
    }
  }
}

function migrate(db: Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version >= MIGRATIONS.length) return;
  db.transaction(() => {
    // Re-read inside the write lock: a concurrent process may have migrated meanwhile.
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      const step = MIGRATIONS[v];
      if (typeof step === 'string') db.exec(step);
      else step(db);
    }
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}

/** A database file or companion that is a symbolic link, a directory or anything but a regular file. */
function unusableFile(path: string): string | undefined {
  for (const suffix of COMPANIONS) {
    let st;
    try {
      st = lstatSync(path + suffix);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) return `${path + suffix} is a symbolic link`;
    if (!st.isFile()) return `${path + suffix} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}`;
  }
  return undefined;
}

/**
 * The database is derived: keep a broken file (and its companions) for inspection, so the next open
 * starts afresh from the log. Links are moved as links, never followed.
 */
export function moveAside(path: string): string {
  const aside = `${path}.corrupt-${Date.now()}`;
  for (const suffix of COMPANIONS) {
    try {
      lstatSync(path + suffix);
    } catch {
      continue;
    }
    renameSync(path + suffix, aside + suffix);
  }
  return aside;
}

/**
 * Move a broken index aside (the logs rebuild it), say so, and record it in the health record: a
 * hook's warning reaches nobody, and cairn doctor must show that the file was damaged (SPEC §2).
 */
export function setAside(path: string, storeDir: string, message: (aside: string) => string, warn: (text: string) => void) {
  const aside = moveAside(path);
  warn(message(aside));
  recordFailure(storeDir, SET_ASIDE, message(aside), new Date(), { repaired: true });
  return aside;
}

/** How a database moved aside is named in the health record. */
const SET_ASIDE = 'state.db';

/** A database the store cannot write: it still serves pure reads from an index built in memory. */
export function openMemoryDatabase(opts: Omit<OpenOptions, 'within'>): Database {
  return prepare(new (loadDriver())(':memory:'), opts);
}

/**
 * What holds SQLite's locks on the database (Linux's /proc/locks lists each lock's pid and inode), so a
 * person learns what to wait for or stop; `another process` where that cannot be told.
 */
export function lockHolders(path: string): string {
  try {
    const inodes = new Set(COMPANIONS.filter((suffix) => existsSync(path + suffix)).map((suffix) => statSync(path + suffix).ino));
    const pids = new Set<number>();
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      const m = /^\d+:\s+(?:->\s+)?\S+\s+\S+\s+\S+\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
      if (m && inodes.has(Number(m[2])) && Number(m[1]) !== process.pid) pids.add(Number(m[1]));
    }
    if (pids.size === 0) return 'another process';
    const named = [...pids].slice(0, 3).map((pid) => `pid ${pid}${commandOf(pid)}`);
    return `another process (${named.join(', ')})`;
  } catch {
    return 'another process';
  }
}

/** ` (node bin/cairn.js rebuild)`: a process's command line, shortened; '' when it cannot be read. */
function commandOf(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const text = argv.map((a) => (a.includes('/') ? a.slice(a.lastIndexOf('/') + 1) : a)).join(' ');
    return text ? `: ${text.length > 60 ? `${text.slice(0, 59)}…` : text}` : '';
  } catch {
    return '';
  }
}

/** SQLite gave up waiting for another connection's lock (busy_timeout). */
export function isBusy(err: unknown): boolean {
  return ((err as { code?: string }).code ?? '').startsWith('SQLITE_BUSY');
}

export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT');
}

function asDatabaseError(err: unknown, path: string): CairnError {
  if (err instanceof CairnError) return err;
  const code = (err as { code?: string }).code;
  // another process holds it (a fresh clone's first replay creates and fills it): not a fault, only not yet
  if (isBusy(err)) return new IndexCatchingUp('lock', `${path}: ${(err as Error).message} (${code}): held by ${lockHolders(path)}`);
  return new CairnError('database', `${path}: ${(err as Error).message}${code ? ` (${code})` : ''}`);
}
