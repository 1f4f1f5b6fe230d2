import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { shortHash } from '../core/text.js';
import { readSmallFile } from '../io/read.js';
import { CONFIG_CAP } from './config.js';

export interface Location {
  root: string;
  dir: string;
  /** Scopes every read and write (SPEC §1.2). */
  project: string;
  /** 'unreadable': config.json holds no readable id; the store refuses to open. */
  projectFrom: 'given' | 'recorded' | 'derived' | 'unreadable';
  /** Not a --dir / $CAIRN_DIR store that many projects may share. */
  ownStore: boolean;
}

export interface LocationOptions {
  root?: string;
  dir?: string;
  project?: string;
  /** Used after $CLAUDE_PROJECT_DIR. */
  payloadCwd?: string;
}

/** The host's project dir outranks the payload's cwd, which follows the agent's `cd` (SPEC §1.2). */
export function locate(opts: LocationOptions = {}, env = process.env): Location {
  const start = opts.root ?? env.CAIRN_ROOT ?? env.CLAUDE_PROJECT_DIR ?? opts.payloadCwd ?? process.cwd();
  const root = findRoot(realOrResolved(start));
  const dirOpt = opts.dir ?? env.CAIRN_DIR;
  const ownStore = !dirOpt;
  const dir = dirOpt ? realOrResolved(dirOpt) : join(root, '.cairn');
  const given = opts.project ?? env.CAIRN_PROJECT;
  if (given) return { root, dir, project: given, projectFrom: 'given', ownStore };
  const recorded = ownStore ? readRecordedId(dir) : undefined;
  if (typeof recorded === 'string') return { root, dir, project: recorded, projectFrom: 'recorded', ownStore };
  return {
    root,
    dir,
    project: projectIdFor(root),
    projectFrom: recorded === UNREADABLE ? 'unreadable' : 'derived',
    ownStore,
  };
}

function realOrResolved(path: string): string {
  const full = resolve(path);
  try {
    return realpathSync(full);
  } catch {
    return full;
  }
}

const UNREADABLE = Symbol('unreadable config.json');

function recordedProjectId(dir: string): string | undefined {
  const id = readRecordedId(dir);
  return typeof id === 'string' ? id : undefined;
}

/** A typo elsewhere in config.json must not switch the project's identity. */
function readRecordedId(dir: string): string | undefined | typeof UNREADABLE {
  let text: string | undefined;
  try {
    text = readSmallFile(join(dir, 'config.json'), CONFIG_CAP)?.toString('utf8');
  } catch {
    return UNREADABLE;
  }
  if (text === undefined) return undefined;
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    const pair = /"project"\s*:\s*"([^"\\]{1,200})"/.exec(text);
    return pair ? pair[1] : UNREADABLE;
  }
  const project = (config as { project?: unknown } | null)?.project;
  return typeof project === 'string' && project !== '' ? project : undefined;
}

export interface ProjectIdStatus {
  recorded: string | null;
  derived: string;
  mismatch: boolean;
}

/** SPEC §1.2: a changed derived id is reported, never silently followed. */
export function projectIdStatus(location: Location): ProjectIdStatus {
  const recorded = location.ownStore ? (recordedProjectId(location.dir) ?? null) : null;
  const derived = projectIdFor(location.root);
  return { recorded, derived, mismatch: recorded !== null && recorded !== derived };
}

function findRoot(start: string): string {
  for (let dir = start; ; ) {
    if (existsSync(join(dir, '.cairn')) || existsSync(join(dir, '.git'))) return dir;
    const up = dirname(dir);
    if (up === dir) return start;
    dir = up;
  }
}

/** Of the normalised origin URL, else of the root's real path. */
export function projectIdFor(root: string): string {
  const origin = readOriginUrl(root);
  if (origin) return shortHash(`git:${normaliseRemoteUrl(origin)}`);
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // keep the path as given
  }
  return shortHash(`path:${real}`);
}

export function normaliseRemoteUrl(url: string): string {
  let u = url.trim();
  let scp = /^([^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(u); // [user@]host:path
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) scp = null;
  let host: string;
  let path: string;
  if (scp) {
    host = scp[2];
    path = scp[3];
  } else {
    u = u.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
    u = u.replace(/^[^@/]*@/, ''); // credentials
    const slash = u.indexOf('/');
    host = slash < 0 ? u : u.slice(0, slash);
    path = slash < 0 ? '' : u.slice(slash + 1);
    host = host.replace(/:\d+$/, ''); // the port does not change the repository
  }
  path = path
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .replace(/^\/+/, '');
  return `${host.toLowerCase()}/${path}`;
}

export function readOriginUrl(root: string): string | undefined {
  const configPath = gitConfigPath(root);
  if (!configPath) return undefined;
  let text: string;
  try {
    text = gitFile(configPath);
  } catch {
    return undefined;
  }
  let inOrigin = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[\s*([^\]\s]+)(?:\s+"([^"]*)")?\s*\]/.exec(line);
    if (section) {
      inOrigin = section[1].toLowerCase() === 'remote' && section[2] === 'origin';
      continue;
    }
    if (!inOrigin) continue;
    const kv = /^url\s*=\s*(.*)$/i.exec(line);
    if (kv) return kv[1].replace(/^"(.*)"$/, '$1').trim() || undefined;
  }
  return undefined;
}

export function gitDirOf(root: string): string | undefined {
  const dotGit = join(root, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    // a worktree or submodule: ".git" is a file "gitdir: <path>"
    const m = /^gitdir:\s*(.+)$/m.exec(gitFile(dotGit));
    if (!m) return undefined;
    return isAbsolute(m[1].trim()) ? m[1].trim() : resolve(root, m[1].trim());
  } catch {
    return undefined;
  }
}

/** Undefined on a detached HEAD. */
export function currentBranch(root: string): string | undefined {
  const dir = gitDirOf(root);
  if (!dir) return undefined;
  try {
    const m = /^ref:\s*refs\/heads\/(.+)$/m.exec(gitFile(join(dir, 'HEAD')));
    return m ? m[1].trim() : undefined;
  } catch {
    return undefined;
  }
}

/** Bounded: a FIFO in its place must not hang a hook; throws when missing. */
function gitFile(path: string): string {
  const bytes = readSmallFile(path, GIT_FILE_CAP);
  if (bytes === undefined) throw new Error(`${path} is missing`);
  return bytes.toString('utf8');
}

const GIT_FILE_CAP = 1024 * 1024;

function gitConfigPath(root: string): string | undefined {
  let gitDir = gitDirOf(root);
  if (!gitDir) return undefined;
  // a linked worktree keeps its config in the common dir
  try {
    const common = gitFile(join(gitDir, 'commondir')).trim();
    if (common) gitDir = isAbsolute(common) ? common : resolve(gitDir, common);
  } catch {
    // not a linked worktree
  }
  return join(gitDir, 'config');
}
