import { join } from 'node:path';
import { CairnError, describeError } from '../core/errors.js';
import { asObject, jsonErrorPlace } from '../core/json.js';
import { normaliseText, shortHash } from '../core/text.js';
import { readSmallFile } from '../io/read.js';
import { parseJsonLine, readLines } from '../io/jsonl.js';
import { MAX_TAGS } from './tags.js';
import { MAX_COMMANDS } from './commands.js';
import { unique } from './report.js';
import type { Check } from '../store/health.js';
import { readGitattributes } from '../store/init.js';
import { redactSecrets } from '../core/secrets.js';
import { sanitizeUntrusted } from '../core/sanitize.js';

// The landing library (SPEC §5): `.cairn/landings.jsonl`, merged by union; the reader folds captures of one fingerprint.
// The earlier `landing-patterns.json` is still read and folded in, never written (docs/decisions.md).

export interface LandingPattern {
  id: string;
  /** Never a machine path: the file is committed. */
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

export interface LandingRecord extends LandingPattern {
  issue: string | null;
  run: string | null;
}

export const MAX_PATHS = 20;

export function landingLogPath(storeDir: string): string {
  return join(storeDir, 'landings.jsonl');
}

export function libraryPath(storeDir: string): string {
  return join(storeDir, 'landing-patterns.json');
}

/** Normalised title, sorted tags, project (SPEC §5). */
export function fingerprint(p: Pick<LandingPattern, 'title' | 'tags' | 'sourceRepoRoot'>): string {
  return shortHash(JSON.stringify([normaliseText(p.title), [...p.tags].sort(), p.sourceRepoRoot]));
}

/** Both files are read whole at every session start: past this they are refused. */
const LIBRARY_CAP = 32 * 1024 * 1024;

/** A missing file is an empty library, anything unreadable an input error. */
export function readLibrary(path: string): LandingPattern[] {
  // a link, a device or a huge file is an error
  const bytes = readSmallFile(path, LIBRARY_CAP, true);
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

const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Undefined when not a capture. */
function toRecord(value: Record<string, unknown>): LandingRecord | undefined {
  if (!isLandingPattern(value) || typeof value.updatedAt !== 'string' || typeof value.createdAt !== 'string') return undefined;
  const v = value as unknown as LandingRecord;
  return {
    id: v.id,
    sourceRepoRoot: v.sourceRepoRoot,
    missionId: textOrNull(v.missionId),
    reportId: textOrNull(v.reportId),
    title: v.title,
    summary: typeof v.summary === 'string' ? v.summary : '',
    prompt: textOrNull(v.prompt),
    tags: v.tags,
    examplePaths: v.examplePaths,
    commands: v.commands,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
    issue: textOrNull(v.issue),
    run: textOrNull(v.run),
  };
}

/** A line that is not one is reported and skipped, never removed (SPEC §2). */
export function readLandingLog(storeDir: string, warn: (message: string) => void): LandingRecord[] {
  const records: LandingRecord[] = [];
  let bytes = 0;
  for (const line of readLines(landingLogPath(storeDir))) {
    bytes = line.end;
    if (bytes > LIBRARY_CAP) throw new CairnError('store', `${landingLogPath(storeDir)} is larger than ${LIBRARY_CAP} bytes; not read`);
    if (!line.text.trim()) continue;
    const parsed = parseJsonLine(line.text);
    const record = parsed.ok ? toRecord(parsed.value) : undefined;
    if (record) records.push(record);
    else warn(`landings.jsonl: skipped the line at byte ${line.offset}: ${parsed.ok ? 'not a landing capture' : parsed.reason}`);
  }
  return records;
}

/** Latest texts and ids, lists unioned (SPEC §5). */
function mergePattern(existing: LandingPattern, incoming: LandingPattern): LandingPattern {
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

function patternOf(record: LandingPattern): LandingPattern {
  const { issue: _issue, run: _run, ...pattern } = record as LandingRecord;
  return pattern;
}

/** Folded in time order, so the result does not depend on a union merge's order; oldest first, then by id. */
export function foldLandings(captures: LandingPattern[]): LandingPattern[] {
  const byId = new Map<string, { at: string; key: string; pattern: LandingPattern }[]>();
  for (const c of captures) {
    const list = byId.get(c.id) ?? [];
    list.push({ at: typeof c.updatedAt === 'string' ? c.updatedAt : '', key: JSON.stringify(c), pattern: c });
    byId.set(c.id, list);
  }
  const entries = [...byId.values()].map((list) => {
    list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return list.slice(1).reduce((entry, next) => mergePattern(entry, patternOf(next.pattern)), patternOf(list[0].pattern));
  });
  return entries.sort((a, b) => compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id));
}

const compareText = (a: unknown, b: unknown) => {
  const x = String(a ?? '');
  const y = String(b ?? '');
  return x < y ? -1 : x > y ? 1 : 0;
};

export function readLandings(storeDir: string, warn: (message: string) => void = () => {}): LandingPattern[] {
  return foldLandings([...readLibrary(libraryPath(storeDir)), ...readLandingLog(storeDir, warn)]);
}

/** Scoped by the recorded project id (SPEC §1.2); texts redacted and sanitised again (old or hand-written lines, §4.6). */
export function projectLandings(storeDir: string, project: string, warn?: (message: string) => void): LandingPattern[] {
  return readLandings(storeDir, warn)
    .filter((p) => p.sourceRepoRoot === project)
    .map((p) => ({
      ...p,
      title: shown(p.title),
      summary: shown(p.summary),
      prompt: p.prompt === null ? null : shown(p.prompt),
      tags: p.tags.map(shown),
      examplePaths: p.examplePaths.map(shown),
      commands: p.commands.map(shown),
    }));
}

const shown = (text: string) => sanitizeUntrusted(redactSecrets(text).text);

/** For doctor: an earlier library that does not read blocks every capture. */
export function libraryCheck(storeDir: string): Check {
  const name = 'landing patterns';
  let count: number;
  const skipped: string[] = [];
  try {
    count = readLandings(storeDir, (m) => skipped.push(m)).length;
  } catch (err) {
    return { name, status: 'fail', detail: describeError(err) };
  }
  if (count === 0 && skipped.length === 0) return { name, status: 'ok', detail: 'none yet' };
  if (skipped.length > 0) return { name, status: 'warn', detail: `${count} pattern(s); ${skipped.length} line(s) skipped: ${skipped[0]}` };
  if (!readGitattributes(storeDir).includes('landings.jsonl merge=union')) {
    return {
      name,
      status: 'warn',
      detail: `${count} pattern(s); .cairn/.gitattributes does not merge landings.jsonl by union: run cairn init, then commit it`,
    };
  }
  return { name, status: 'ok', detail: `${count} pattern(s)` };
}
