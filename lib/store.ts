import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CairnError } from './errors.js';
import { loadConfig, DEFAULT_CONFIG, type Config } from './config.js';
import { locate, type Location, type LocationOptions } from './root.js';
import { openDatabase, type Database } from './db.js';
import { appendEvents, rebuildFromLog, syncEvents, type SyncReport } from './eventlog.js';
import type { CairnEvent, EventPayload } from './events.js';
import type { Deadline } from './deadline.js';
import type { Logger } from './log.js';

/** An opened `.cairn/` store: where it is, its settings, and (lazily) its database kept in sync with the log. */
export class Store {
  readonly config: Config;
  private database: Database | undefined;

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
      this.database = openDatabase(this.dbPath, { deadline: this.deadline, strict: this.strict, warn: (m) => this.log.warn(m) });
      this.sync();
    }
    return this.database;
  }

  sync(): SyncReport {
    return syncEvents(this.db, this.eventsPath, { deadline: this.deadline, warn: (m) => this.log.warn(m) });
  }

  rebuild(): SyncReport {
    const db = this.database ?? openDatabase(this.dbPath, { deadline: this.deadline, strict: this.strict, warn: (m) => this.log.warn(m) });
    this.database = db;
    return rebuildFromLog(db, this.eventsPath, { deadline: this.deadline, warn: (m) => this.log.warn(m) });
  }

  /** Append events to the log, then apply them (and anything else appended meanwhile). */
  append(payloads: EventPayload[]): CairnEvent[] {
    if (payloads.length === 0) return [];
    const db = this.db; // catch up first, so the writer's decisions were made on current state
    const events = appendEvents(this.eventsPath, this.project, payloads, this.deadline);
    syncEvents(db, this.eventsPath, { deadline: this.deadline, warn: (m) => this.log.warn(m) });
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

