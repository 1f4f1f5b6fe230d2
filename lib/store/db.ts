import { createRequire } from 'node:module';
import { existsSync, lstatSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CairnError, IndexCatchingUp } from '../core/errors.js';
import { mkdirNoFollow } from '../io/safe.js';
import { recordFailure } from './health.js';
import { sleepSync, type Deadline } from '../core/deadline.js';
import { sha256 } from '../core/crypto.js';
import { DECAYING_KEY_SQL, DECAYING_SQL, IMMUNE_KEY_SQL, IMMUNE_SQL } from './rank-keys.js';

export type Database = BetterSqlite3.Database;

// The one SQLite opener. The native addon loads on first open: a hook needing none never pays, a failed build fails open.
// The schema's text is hashed into its version, so it stays beside the opener that checks it.
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
      addon = require(require.resolve('better-sqlite3/build/Release/better_sqlite3.node'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
      return require('better-sqlite3') as Driver; // anywhere else the package finds it itself
    }
    return class extends BetterSqlite3 {
      constructor(filename?: string | Buffer, options?: BetterSqlite3.Options) {
        // the addon itself as well as a path (its types know only the path)
        super(filename, { ...options, nativeBinding: addon as string });
      }
    } as Driver;
  } catch (err) {
    throw new CairnError('database', `better-sqlite3 is not loadable (${(err as Error).message.split('\n')[0]})`);
  }
}

/** What a score reads, and the id bits: the rank indexes hold them, so a ranking or a digest reads no table row. */
const BASE_COLUMNS =
  'held, untested, ignore_weight, success_count, ignore_count, reinforcement_count, lifecycle, category, last_used, labels, files, phases, id_bits';

/** Only readers use them: a full replay drops them and builds them once at its end. */
export const EVENT_LOG_INDEXES: Record<string, string> = {
  // postings in the order their patterns were added (seq): a new pattern's go at the end of their ranges; with ntok,
  // BM25 and the near-duplicates' size filter read the index alone
  pattern_terms_key: 'CREATE UNIQUE INDEX pattern_terms_key ON pattern_terms (project, role, term, seq, pattern, ntok)',
  patterns_role: 'CREATE INDEX patterns_role ON patterns (project, role, ntok)',
  deliberations_scope: 'CREATE INDEX deliberations_scope ON deliberations (project, role, issue, run, ts)',
  injections_scope: 'CREATE INDEX injections_scope ON injections (project, issue, run, role)',
  links_scope: 'CREATE INDEX links_scope ON links (project, issue, run, role)',
  patterns_rank_decaying: `CREATE INDEX patterns_rank_decaying ON patterns (project, role, (${DECAYING_KEY_SQL}), term_seq, ${BASE_COLUMNS})
     WHERE ${DECAYING_SQL}`,
  patterns_rank_immune: `CREATE INDEX patterns_rank_immune ON patterns (project, role, (${IMMUNE_KEY_SQL}), term_seq, ${BASE_COLUMNS})
     WHERE ${IMMUNE_SQL}`,
  // a query's matches' patterns by where their postings start; with id_bits, a summary's basis reads it alone
  patterns_seq: `CREATE INDEX patterns_seq ON patterns (project, term_seq, role, ${BASE_COLUMNS})`,
  // a summary's newest candidates
  patterns_first_seen: 'CREATE INDEX patterns_first_seen ON patterns (project, role, first_seen)',
  // the few deprecated patterns, which BM25 over the term index leaves out
  patterns_deprecated: "CREATE INDEX patterns_deprecated ON patterns (project, role, id) WHERE lifecycle = 'deprecated'",
};

// A cache of the logs (SPEC §1): one schema, no migrations; another version is emptied and replayed, caches kept.
const TABLES = `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  -- the pattern loop (lib/events/reducer.ts)
  CREATE TABLE patterns (
    project TEXT NOT NULL, id TEXT NOT NULL, id_bits INTEGER NOT NULL DEFAULT 0, role TEXT NOT NULL, text TEXT NOT NULL,
    ntok INTEGER NOT NULL, category TEXT NOT NULL, term_seq INTEGER NOT NULL DEFAULT 0,
    -- the record as counted, and the evidence the score reads (lib/events/credit.ts)
    success_count REAL NOT NULL DEFAULT 0, ignore_count INTEGER NOT NULL DEFAULT 0, reinforcement_count INTEGER NOT NULL DEFAULT 0,
    sightings INTEGER NOT NULL DEFAULT 0, held REAL NOT NULL DEFAULT 0, ignore_weight REAL NOT NULL DEFAULT 0,
    untested REAL NOT NULL DEFAULT 0,
    was_validated INTEGER NOT NULL DEFAULT 0, regressed INTEGER NOT NULL DEFAULT 0, lifecycle TEXT NOT NULL DEFAULT 'observed',
    first_seen TEXT NOT NULL, last_used INTEGER NOT NULL,
    labels TEXT NOT NULL DEFAULT '[]', files TEXT NOT NULL DEFAULT '[]', phases TEXT NOT NULL DEFAULT '[]',
    issues TEXT NOT NULL DEFAULT '[]',
    promoted_by TEXT, reason TEXT,
    PRIMARY KEY (project, id)
  ) WITHOUT ROWID;
  CREATE TABLE deliberations (
    project TEXT NOT NULL, id TEXT NOT NULL, ts TEXT NOT NULL, role TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL,
    phase TEXT, iteration INTEGER, labels TEXT NOT NULL, files TEXT NOT NULL, verdict TEXT, evidence TEXT NOT NULL,
    text_hash TEXT NOT NULL, size INTEGER NOT NULL, path TEXT NOT NULL, duplicate_of TEXT,
    PRIMARY KEY (project, id)
  );
  -- which deliberation sighting added a success to which pattern (echo and retraction, SPEC §3.3, §3.7)
  CREATE TABLE sightings (
    project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, role TEXT NOT NULL, pattern TEXT NOT NULL,
    deliberation TEXT NOT NULL, added_success INTEGER NOT NULL, retracted INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE injections (project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, role TEXT NOT NULL, pattern TEXT NOT NULL,
    event TEXT NOT NULL, ts TEXT NOT NULL);
  CREATE TABLE dismissals (project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, pattern TEXT NOT NULL, finding TEXT,
    PRIMARY KEY (project, issue, run, pattern));
  CREATE TABLE outcomes (project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, result TEXT NOT NULL, ts TEXT NOT NULL,
    grading TEXT, PRIMARY KEY (project, issue, run));
  CREATE TABLE summaries (project TEXT NOT NULL, role TEXT NOT NULL, basis TEXT NOT NULL, text TEXT NOT NULL, ts TEXT NOT NULL, newest TEXT,
    PRIMARY KEY (project, role));
  -- a pattern is reinforced, or aged, at most once per issue/run
  CREATE TABLE run_marks (project TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, pattern TEXT NOT NULL, kind TEXT NOT NULL,
    PRIMARY KEY (project, issue, run, pattern, kind)) WITHOUT ROWID;
  -- findings linked to the patterns they apply (SPEC §3.9.1)
  CREATE TABLE links (project TEXT NOT NULL, deliberation TEXT NOT NULL, issue TEXT NOT NULL, run TEXT NOT NULL, role TEXT NOT NULL,
    finding TEXT NOT NULL, pattern TEXT NOT NULL, match TEXT NOT NULL, summary TEXT NOT NULL,
    PRIMARY KEY (project, deliberation, finding, pattern)) WITHOUT ROWID;
  -- each piece of tested evidence as it arrived (cairn explain ages it)
  CREATE TABLE evidence (project TEXT NOT NULL, pattern TEXT NOT NULL, seq INTEGER PRIMARY KEY, event TEXT NOT NULL,
    held REAL NOT NULL, against REAL NOT NULL, aging REAL NOT NULL);
  -- the term index (lib/patterns/index/terms.ts): each term's postings in the order their patterns were added (seq),
  -- each with its pattern's number of terms (ntok); long lists kept packed, one blob a term
  CREATE TABLE pattern_terms (project TEXT NOT NULL, role TEXT NOT NULL, term TEXT NOT NULL, pattern TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0, ntok INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE pattern_postings (project TEXT NOT NULL, role TEXT NOT NULL, term TEXT NOT NULL, through INTEGER NOT NULL,
    last TEXT NOT NULL, postings BLOB NOT NULL, PRIMARY KEY (project, role, term));
  -- the knowledge index (SPEC §4.3, lib/knowledge/index.ts): one row per line of knowledge.jsonl, its archive
  -- and the active cache; a line's version (key + normalised content) lets a later line replace it
  CREATE TABLE knowledge (
    id INTEGER PRIMARY KEY,
    source INTEGER NOT NULL,   -- 0 archive, 1 log, 2 active cache
    seq INTEGER NOT NULL,      -- order within the raw logs (archive first) or within the active cache
    version TEXT NOT NULL,
    project TEXT NOT NULL,     -- '' for lines written without one: visible to every reader of the store
    key TEXT NOT NULL, type TEXT NOT NULL, content TEXT NOT NULL, tags TEXT NOT NULL, bead TEXT NOT NULL,
    ts INTEGER NOT NULL, status TEXT, noise INTEGER NOT NULL, recall_key TEXT, recall_tokens INTEGER);
  CREATE VIRTUAL TABLE knowledge_fts USING fts5 (content, tags, type, key,
    content = 'knowledge', content_rowid = 'id', tokenize = 'porter unicode61');
  -- auto-recall's working set: the newest lines of the log and of the active cache
  CREATE VIRTUAL TABLE knowledge_newest_fts USING fts5 (content, tags, type, key, source,
    content = 'knowledge', content_rowid = 'id', tokenize = 'porter unicode61');
  CREATE TABLE knowledge_newest (id INTEGER PRIMARY KEY, source INTEGER NOT NULL);
`;

const INDEXES = [
  'CREATE INDEX sightings_scope ON sightings (project, issue, run, pattern)',
  'CREATE INDEX deliberations_text ON deliberations (project, role, issue, run, text_hash)',
  'CREATE INDEX evidence_pattern ON evidence (project, pattern, seq)',
  'CREATE INDEX knowledge_version ON knowledge (version, seq)',
  'CREATE INDEX knowledge_recent ON knowledge (source, ts)',
  'CREATE INDEX knowledge_source ON knowledge (source, id)',
  'CREATE INDEX knowledge_status ON knowledge (status) WHERE status IS NOT NULL',
  'CREATE INDEX knowledge_key ON knowledge (key)',
  'CREATE INDEX knowledge_newest_source ON knowledge_newest (source, id)',
];

/** Content-addressed: true whatever the logs say, so they outlive a rebuild. */
const CACHES = `
  CREATE TABLE IF NOT EXISTS token_counts (key TEXT PRIMARY KEY, tokens INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
`;
const CACHE_TABLES = ['token_counts', 'embeddings'];

const SCHEMA = [TABLES, ...INDEXES, ...Object.values(EVENT_LOG_INDEXES), CACHES].join(';\n');
/** 28 bits of the schema's hash (never 0, a new database's); comments and layout aside: reformatting costs no replay. */
export const SCHEMA_VERSION = parseInt(sha256(SCHEMA.replace(/--[^\n]*/g, '').replace(/\s+/g, ' ')).slice(0, 7), 16) || 1;

/** Changes whenever the database does, by any connection: the key of a cache of rows. */
export function databaseVersion(db: Database): string {
  return `${db.pragma('data_version', { simple: true })}:${(db.prepare('SELECT total_changes() AS n').get() as { n: number }).n}`;
}

/** Its follower empties them to rebuild. */
export const EVENT_LOG_TABLES = [
  'patterns',
  'deliberations',
  'sightings',
  'injections',
  'dismissals',
  'outcomes',
  'summaries',
  'run_marks',
  'links',
  'pattern_terms',
  'evidence',
];

export interface OpenOptions {
  deadline: Deadline;
  strict: boolean;
  warn: (message: string) => void;
  /** No symbolic link in it is written through (SPEC §2). */
  within: string;
}

const COMPANIONS = ['', '-wal', '-shm', '-journal'];

export function openDatabase(path: string, opts: OpenOptions): Database {
  const Driver = loadDriver();
  mkdirNoFollow(opts.within, dirname(path));
  const unusable = unusableFile(path);
  if (unusable) {
    // SQLite would write through a link, or fail on a directory at every run
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
    // busy_timeout first, so the switch to WAL already waits for a concurrent opener
    const patience = Math.max(50, opts.deadline.waitLimit());
    db.pragma(`busy_timeout = ${patience}`);
    switchToWal(db, Date.now() + patience);
    // no fsync: the index is rebuilt from the log when damaged or behind, and fsyncs would cost more than the queries
    db.pragma('synchronous = OFF');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Two openers of a new database can deadlock on the switch to WAL: SQLITE_BUSY at once, busy_timeout or not. Retry. */
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
  if (db.pragma('user_version', { simple: true }) === SCHEMA_VERSION) return;
  db.transaction(() => {
    // re-read inside the write lock: another process may have rebuilt it
    if (db.pragma('user_version', { simple: true }) === SCHEMA_VERSION) return;
    dropDerived(db);
    db.exec(SCHEMA);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** Virtual tables first (they own shadow tables); indexes go with their tables. */
function dropDerived(db: Database): void {
  const tables = (virtual: boolean) =>
    db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND (sql LIKE 'CREATE VIRTUAL%') = ?`)
      .pluck()
      .all(virtual ? 1 : 0) as string[];
  for (const virtual of [true, false]) {
    for (const name of tables(virtual)) if (!CACHE_TABLES.includes(name)) db.exec(`DROP TABLE IF EXISTS "${name.replace(/"/g, '""')}"`);
  }
}

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

/** Kept for inspection; links move as links. */
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

/** Recorded: a hook's warning reaches nobody, and doctor must show it (SPEC §2). */
export function setAside(path: string, storeDir: string, message: (aside: string) => string, warn: (text: string) => void) {
  const aside = moveAside(path);
  warn(message(aside));
  recordFailure(storeDir, SET_ASIDE, message(aside), new Date(), { repaired: true });
  return aside;
}

const SET_ASIDE = 'state.db';

export function openMemoryDatabase(opts: Omit<OpenOptions, 'within'>): Database {
  return prepare(new (loadDriver())(':memory:'), opts);
}

/** From /proc/locks, so a person learns what to wait for. */
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

function commandOf(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const text = argv.map((a) => (a.includes('/') ? a.slice(a.lastIndexOf('/') + 1) : a)).join(' ');
    return text ? `: ${text.length > 60 ? `${text.slice(0, 59)}…` : text}` : '';
  } catch {
    return '';
  }
}

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
  // another process holds it (a fresh clone's first replay): not yet, not a fault
  if (isBusy(err)) return new IndexCatchingUp('lock', `${path}: ${(err as Error).message} (${code}): held by ${lockHolders(path)}`);
  return new CairnError('database', `${path}: ${(err as Error).message}${code ? ` (${code})` : ''}`);
}
