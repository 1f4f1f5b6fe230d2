import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { CairnError, IndexCatchingUp } from '../core/errors.js';
import { loadConfig, DEFAULT_CONFIG, type Config } from './config.js';
import { locate, type Location, type LocationOptions } from './root.js';
import { isBusy, isCorruption, lockHolders, openDatabase, openMemoryDatabase, setAside, type Database } from './db.js';
import { initStore, recordProjectId } from './init.js';
import { clearFailure, recordFailure } from './health.js';
import { follow, rebuildIndex, type FollowReport, type LogFollower } from './follower.js';
import { appendLines } from '../io/jsonl.js';
import { writeFileAtomic } from '../io/atomic.js';
import type { Deadline } from '../core/deadline.js';
import type { Logger } from '../core/logger.js';
import type { Progress } from '../core/progress.js';

/** A replay touches the same pattern pages in every slice, so fewer slices are faster. */
const REBUILD_SLICE_MS = 2_000;

export class Store {
  readonly config: Config;
  private db: Database | undefined;
  private readonly followed = new Set<string>();
  private appended = false;
  private inMemory = false;

  constructor(
    readonly location: Location,
    readonly deadline: Deadline,
    readonly log: Logger,
    readonly strict: boolean,
    readonly writesInOrder = false,
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
  get beadTitlesPath(): string {
    return join(this.dir, 'cache', 'bead-titles.json');
  }
  get lineCountPath(): string {
    return join(this.dir, 'cache', 'knowledge-lines.json');
  }
  artifactPath(kind: string, name: string): string {
    return join(this.dir, 'artifacts', kind, name);
  }

  /** The commit point (SPEC §2): after it, a failure is a warning the next run catches up on. */
  appendLines(path: string, build: (lastLine: string | undefined) => string[]): string[] {
    this.deadline.check('recording the change');
    const lines = appendLines(path, build, { deadline: this.deadline, within: this.dir });
    if (lines.length > 0) this.appended = true;
    return lines;
  }

  get committed(): boolean {
    return this.appended;
  }

  writeFile(path: string, content: string | ((fd: number) => void)): void {
    writeFileAtomic(path, content, this.dir);
  }

  get database(): Database {
    this.db ??= this.open();
    return this.db;
  }

  indexed<T>(follower: LogFollower<T>): Database {
    // every read of a domain starts here: where a run past its deadline stops (SPEC §2)
    this.deadline.check(`reading the ${follower.name} index`);
    if (!this.followed.has(follower.name)) {
      try {
        this.healing(() => follow(this.database, follower, this.followOptions()));
      } catch (err) {
        // held as long as this run can wait: another process is catching up (a fresh clone's replay)
        if (isBusy(err))
          throw new IndexCatchingUp(
            'lock',
            `${this.dbPath} is held by ${lockHolders(this.dbPath)} (${(err as Error).message}); it may be bringing the index up to date`,
          );
        throw err;
      }
      this.followed.add(follower.name);
    }
    return this.database;
  }

  refresh<T>(follower: LogFollower<T>, progress?: Progress): FollowReport {
    return this.healing(() => follow(this.database, follower, this.followOptions(progress)));
  }

  rebuildIndex<T>(follower: LogFollower<T>, progress?: Progress): FollowReport {
    this.db ??= this.open(); // tells whether the index file can be written
    if (this.inMemory) throw new CairnError('store', `cannot rebuild ${this.dbPath}: the store is read-only`);
    const options = { ...this.followOptions(progress), sliceMs: REBUILD_SLICE_MS };
    const report = this.healing(() => rebuildIndex(this.database, follower, options));
    this.followed.add(follower.name);
    return report;
  }

  private followOptions(progress?: Progress) {
    return { deadline: this.deadline, warn: (m: string) => this.log.warn(m), progress };
  }

  /** The log holds everything; the next open rebuilds it. */
  quarantine(err: unknown): void {
    this.close();
    try {
      const why = (err as Error).message;
      const said = (aside: string) => `${this.dbPath} is corrupt (${why}); moved it to ${aside} to rebuild it from the log`;
      setAside(this.dbPath, this.dir, said, (m) => this.log.warn(m));
    } catch {
      // a read-only store: the caller reports the error
    }
  }

  /** A store that cannot be written gets one in memory, so pure reads work (SPEC §2). */
  private open(): Database {
    const opts = {
      deadline: this.deadline,
      strict: this.strict,
      warn: (m: string) => this.log.warn(m),
      within: this.dir,
    };
    if (!indexWritable(this.dbPath, this.dir)) {
      this.inMemory = true;
      this.log.warn(`${this.dbPath} cannot be written (a read-only store); reading from an index built in memory from the logs`);
      return openMemoryDatabase(opts);
    }
    return openDatabase(this.dbPath, opts);
  }

  /** Idempotent work; a corrupt page the open did not see: afresh from the log, run again. */
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

export function indexWritable(dbPath: string, storeDir: string): boolean {
  const cache = dirname(dbPath);
  return writable(dbPath) && writable(cache) && (existsSync(cache) || writable(storeDir));
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Unseen in a hook's stderr: run on defaults, record the problem for doctor (SPEC §2). */
function readConfig(dir: string, log: Logger, strict: boolean): Config {
  try {
    const config = loadConfig(dir);
    clearFailure(dir, CONFIG_PROBLEM);
    return config;
  } catch (err) {
    if (strict) throw err;
    log.warn((err as Error).message);
    recordFailure(dir, CONFIG_PROBLEM, (err as Error).message);
    return DEFAULT_CONFIG;
  }
}

const CONFIG_PROBLEM = 'config.json';

export interface StoreOptions {
  payloadCwd?: string | null;
  /** SPEC §1.2 */
  create?: boolean;
  writesInOrder?: boolean;
}

/** Missing: an error, except a writer (`create`) in a git work tree creates `.cairn/` as init would (SPEC §1.2). */
export function openStore(
  opts: LocationOptions,
  deadline: Deadline,
  log: Logger,
  strict: boolean,
  create = false,
  writesInOrder = false,
): Store {
  const location = locate(opts);
  if (location.projectFrom === 'unreadable') {
    // the derived id would silently split the project's memory (SPEC §1.2)
    throw new CairnError(
      'store',
      `${join(location.dir, 'config.json')} cannot be read, so the project id recorded in it is unknown; fix the file (cairn doctor)`,
    );
  }
  if (!isDirectory(location.dir)) {
    if (!(create && location.ownStore && existsSync(join(location.root, '.git')))) {
      throw new CairnError('store', `no cairn store at ${location.dir} (run \`cairn init\` in the project)`);
    }
    initStore(location.dir);
    recordProjectId(location);
    log.info(`created the store ${location.dir} (commit it: git add ${relative(location.root, location.dir)})`);
  }
  return new Store(location, deadline, log, strict, writesInOrder);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
