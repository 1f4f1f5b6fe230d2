import { dirname, join } from 'node:path';
import { CairnError, describeError } from '../core/errors.js';
import { asObject, jsonErrorPlace } from '../core/json.js';
import { normaliseText, shortHash } from '../core/text.js';
import { readSmallFile } from '../io/read.js';
import { writeFileAtomic } from '../io/atomic.js';
import { acquireLock } from '../io/lock.js';
import type { Deadline } from '../core/deadline.js';
import { MAX_TAGS } from './tags.js';
import { MAX_COMMANDS } from './commands.js';
import { unique } from './report.js';
import type { Check } from '../store/health.js';

// `.cairn/landing-patterns.json`, the committed library of how past work was landed (SPEC §5): a JSON
// array, rewritten whole — temp file then rename — under the advisory lock, so concurrent captures
// lose nothing. A file that does not read as a library is reported and never overwritten.

export interface LandingPattern {
  id: string;
  /** The project id (never a machine path: the file is committed). */
  sourceRepoRoot: string;
  missionId: string | null;
  reportId: string | null;
  title: string;
  summary: string;
  prompt: string | null;
  tags: string[];
  examplePaths: string[];
  commands: string[];
  createdAt: string;
  updatedAt: string;
}

export const MAX_PATHS = 20;

export function libraryPath(storeDir: string): string {
  return join(storeDir, 'landing-patterns.json');
}

/** Same work in the same project: normalised title, sorted tags, project (SPEC §5). */
export function fingerprint(p: Pick<LandingPattern, 'title' | 'tags' | 'sourceRepoRoot'>): string {
  return shortHash(JSON.stringify([normaliseText(p.title), [...p.tags].sort(), p.sourceRepoRoot]));
}

const LIBRARY_CAP = 32 * 1024 * 1024;

/** The library's entries; a missing file is an empty library, anything unreadable is an input error. */
export function readLibrary(path: string): LandingPattern[] {
  const bytes = readSmallFile(path, LIBRARY_CAP); // a missing file is undefined; a link to a device or a huge file is an error
  if (bytes === undefined) return [];
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CairnError('input', `${path} is not valid JSON (${jsonErrorPlace(text, err)}); left as it is`);
  }
  if (!Array.isArray(value)) throw new CairnError('input', `${path} is not a list of landing patterns; left as it is`);
  const bad = value.findIndex((e) => !isLandingPattern(e));
  if (bad >= 0) throw new CairnError('input', `${path}: entry ${bad + 1} is not a landing pattern; left as it is`);
  return value as LandingPattern[];
}

function isLandingPattern(value: unknown): boolean {
  const e = asObject(value);
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  return (
    e !== null &&
    typeof e.id === 'string' &&
    typeof e.title === 'string' &&
    typeof e.sourceRepoRoot === 'string' &&
    strings(e.tags) &&
    strings(e.examplePaths) &&
    strings(e.commands)
  );
}

/** Fold a new capture into an entry of the same fingerprint: latest texts and ids, lists unioned (SPEC §5). */
export function mergePattern(existing: LandingPattern, incoming: LandingPattern): LandingPattern {
  return {
    ...existing,
    summary: incoming.summary,
    prompt: incoming.prompt,
    reportId: incoming.reportId,
    missionId: incoming.missionId,
    tags: unique([...existing.tags, ...incoming.tags]).slice(0, MAX_TAGS),
    examplePaths: unique([...existing.examplePaths, ...incoming.examplePaths]).slice(0, MAX_PATHS),
    commands: unique([...existing.commands, ...incoming.commands]).slice(0, MAX_COMMANDS),
    updatedAt: incoming.updatedAt,
  };
}

/** Add or merge one pattern under the lock; returns the stored entry and whether it merged into one. */
export function savePattern(path: string, pattern: LandingPattern, deadline: Deadline): { entry: LandingPattern; merged: boolean } {
  const lock = acquireLock(path, deadline);
  try {
    const entries = readLibrary(path);
    const key = fingerprint(pattern);
    const at = entries.findIndex((e) => fingerprint(e) === key);
    const entry = at >= 0 ? mergePattern(entries[at], pattern) : pattern;
    if (at >= 0) entries[at] = entry;
    else entries.push(entry);
    // Oldest first, so a capture appends at the end of the file and diffs stay small.
    entries.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    writeFileAtomic(path, JSON.stringify(entries, null, 2) + '\n', dirname(path)); // the store directory
    return { entry, merged: at >= 0 };
  } finally {
    lock.release();
  }
}

/** For `cairn doctor`: the library reads (a corrupt one blocks every capture). */
export function libraryCheck(storeDir: string): Check {
  try {
    const n = readLibrary(libraryPath(storeDir)).length;
    return { name: 'landing-patterns.json', status: 'ok', detail: n === 0 ? 'none yet' : `${n} pattern(s)` };
  } catch (err) {
    return { name: 'landing-patterns.json', status: 'fail', detail: describeError(err) };
  }
}
