import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CairnError } from '../core/errors.js';
import { loadConfig, DEFAULT_CONFIG, type Config } from './config.js';
import { locate, type Location, type LocationOptions } from './root.js';
import { isCorruption, moveAside, openDatabase, type Database } from './db.js';
import { appendEvents, rebuildFromLog, syncEvents, type SyncReport } from '../events/log.js';
import type { CairnEvent, EventPayload } from '../events/types.js';
import type { Deadline } from '../core/deadline.js';
import type { Logger } from '../core/logger.js';

/** An opened `.cairn/` store: where it is, its settings, and (lazily) its database kept in sync with the log. */
export class Store {
  readonly config: Config;
  private database: Database | undefined;
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
  artifactPath(kind: string, name: string): string {
    return join(this.dir, 'artifacts', kind, name);
  }

  /** The database, opened on first use and brought up to date with the event log. */
  get db(): Database {
    if (!this.database) {
      this.database = this.open();
      this.healing(() => this.sync());
    }
    return this.database;
  }

  sync(): SyncReport {
    return syncEvents(this.db, this.eventsPath, { deadline: this.deadline, warn: (m) => this.log.warn(m) });
  }

  rebuild(): SyncReport {
    this.database ??= this.open();
    return this.healing(() => rebuildFromLog(this.database!, this.eventsPath, { deadline: this.deadline, warn: (m) => this.log.warn(m) }));
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
      this.database = this.open();
      return work();
    }
  }

  /** Whether this run has written to the log: its change is recorded, whatever happens next (SPEC §2). */
  get committed(): boolean {
    return this.appended;
  }

  /**
   * Append events to the log, then apply them (and anything else appended meanwhile). The append is
   * the commit point: before it nothing is recorded (a passed deadline stops the run there); after
   * it the change stands, and an index that cannot catch up now does so on the next run.
   */
  append(payloads: EventPayload[]): CairnEvent[] {
    if (payloads.length === 0) return [];
    const db = this.db; // catch up first, so the writer's decisions were made on current state
    this.deadline.check('recording the change');
    const events = appendEvents(this.eventsPath, this.project, payloads, { deadline: this.deadline, within: this.dir });
    this.appended = true;
    try {
      syncEvents(db, this.eventsPath, { deadline: this.deadline, warn: (m) => this.log.warn(m) });
    } catch (err) {
      this.log.warn(`recorded; the index will catch up on the next run (${(err as Error).message})`);
    }
    return events;
  }

  close(): void {
    this.database?.close();
    this.database = undefined;
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

/** Open the store for this invocation; a missing store directory is an error (fail open: nothing to do). */
export function openStore(opts: LocationOptions, deadline: Deadline, log: Logger, strict: boolean): Store {
  const location = locate(opts);
  let isDir = false;
  try {
    isDir = statSync(location.dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new CairnError('store', `no cairn store at ${location.dir} (run \`cairn init\` in the project)`);
  return new Store(location, deadline, log, strict);
}

