import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CairnError } from '../core/errors.js';
import { loadConfig, DEFAULT_CONFIG, type Config } from './config.js';
import { locate, type Location, type LocationOptions } from './root.js';
import { isCorruption, moveAside, openDatabase, type Database } from './db.js';
import { initStore } from './init.js';
import { follow, rebuildIndex, type FollowReport, type LogFollower } from './follower.js';
import { appendLines } from '../io/jsonl.js';
import { writeFileAtomic } from '../io/atomic.js';
import type { Deadline } from '../core/deadline.js';
import type { Logger } from '../core/logger.js';

/** An opened `.cairn/` store: where it is, its settings, and (lazily) its database kept in sync with the log. */
export class Store {
  readonly config: Config;
  private db: Database | undefined;
  private readonly followed = new Set<string>();
  private appended = false;

  constructor(
    readonly location: Location,
    readonly deadline: Deadline,
    readonly log: Logger,
    readonly strict: boolean,
  ) {
    this.config = readConfig(location.dir, log, strict);
  }

  get project(): string {
    return this.location.project;
  }
  get dir(): string {
    return this.location.dir;
  }
  get eventsPath(): string {
    return join(this.dir, 'events.jsonl');
  }
  get dbPath(): string {
    return join(this.dir, 'cache', 'state.db');
  }
  // the knowledge logs and their local companions (SPEC §1.2, §4)
  get knowledgePath(): string {
    return join(this.dir, 'memory', 'knowledge.jsonl');
  }
  get archivePath(): string {
    return join(this.dir, 'memory', 'knowledge.archive.jsonl');
  }
  get activePath(): string {
    return join(this.dir, 'memory', 'knowledge.active.jsonl');
  }
  get auditPath(): string {
    return join(this.dir, 'memory', 'knowledge.audit.jsonl');
  }
  get sessionStatePath(): string {
    return join(this.dir, 'memory', 'session-state.md');
  }
  artifactPath(kind: string, name: string): string {
    return join(this.dir, 'artifacts', kind, name);
  }

  /**
   * Append lines to one of this store's logs (the one JSONL writer, under the log's lock, never
   * through a symbolic link in the store). The append is the commit point (SPEC §2): before it the
   * deadline may still stop the run and nothing is recorded; after it the run's change stands, and
   * what fails later (indexing, the deadline) is a warning that the next run catches up on.
   */
  appendLines(path: string, build: (lastLine: string | undefined) => string[]): string[] {
    this.deadline.check('recording the change');
    const lines = appendLines(path, build, { deadline: this.deadline, within: this.dir });
    if (lines.length > 0) this.appended = true;
    return lines;
  }

  /** Whether this run has appended to a log of the store: its change is recorded, whatever happens next. */
  get committed(): boolean {
    return this.appended;
  }

  /** Rewrite a file of the store whole (temp file, then rename), never through a symbolic link in the store. */
  writeFile(path: string, text: string): void {
    writeFileAtomic(path, text, this.dir);
  }

  /** The database, opened on first use; no log is followed (see `indexed`). */
  get database(): Database {
    this.db ??= this.open();
    return this.db;
  }

  /**
   * The database with this log's derived tables brought up to date (once per process and log): the
   * domains register their logs here, so a command that never asks loads no SQLite at all.
   */
  indexed<T>(follower: LogFollower<T>): Database {
    if (!this.followed.has(follower.name)) {
      this.healing(() => follow(this.database, follower, this.followOptions()));
      this.followed.add(follower.name);
    }
    return this.database;
  }

  /** Bring a log's index up to date again (after this process appended to it). */
  refresh<T>(follower: LogFollower<T>): FollowReport {
    return this.healing(() => follow(this.database, follower, this.followOptions()));
  }

  rebuildIndex<T>(follower: LogFollower<T>): FollowReport {
    const report = this.healing(() => rebuildIndex(this.database, follower, this.followOptions()));
    this.followed.add(follower.name);
    return report;
  }

  private followOptions() {
    return { deadline: this.deadline, warn: (m: string) => this.log.warn(m) };
  }

  /** Move a database with a corrupt page aside (the log still holds everything); the next open rebuilds it. Best effort. */
  quarantine(err: unknown): void {
    this.close();
    try {
      const aside = moveAside(this.dbPath);
      this.log.warn(`${this.dbPath} is corrupt (${(err as Error).message}); moved it to ${aside} to rebuild it from the log`);
    } catch {
      // cannot move it (a read-only store): the error itself is reported by the caller
    }
  }

  private open(): Database {
    return openDatabase(this.dbPath, { deadline: this.deadline, strict: this.strict, warn: (m) => this.log.warn(m) });
  }

  /**
   * Run idempotent work (a sync, a rebuild); if it meets a corrupt page that the open did not see,
   * start afresh from the log and run it again. Under --strict the corruption is the error.
   */
  private healing<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      if (this.strict || !isCorruption(err)) throw err;
      this.quarantine(err);
      this.followed.clear();
      this.db = this.open();
      return work();
    }
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
    this.followed.clear();
  }
}

function readConfig(dir: string, log: Logger, strict: boolean): Config {
  try {
    return loadConfig(dir);
  } catch (err) {
    if (strict) throw err;
    log.warn((err as Error).message);
    return DEFAULT_CONFIG;
  }
}

export interface StoreOptions {
  /** A hook payload's cwd. */
  payloadCwd?: string | null;
  /** First write creates the store (SPEC §1.2): a writer in a git work tree without one creates it as `cairn init` would. */
  create?: boolean;
}

/** Open the store for this invocation; a missing store directory is an error (fail open: nothing to do) unless a writer may create it. */
export function openStore(opts: LocationOptions, deadline: Deadline, log: Logger, strict: boolean, create = false): Store {
  const location = locate(opts);
  let isDir = false;
  try {
    isDir = statSync(location.dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir && create && existsSync(join(location.root, '.git'))) {
    initStore(location.dir);
    isDir = true;
  }
  if (!isDir) throw new CairnError('store', `no cairn store at ${location.dir} (run \`cairn init\` in the project)`);
  return new Store(location, deadline, log, strict);
}

