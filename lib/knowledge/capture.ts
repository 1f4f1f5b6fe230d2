import { existsSync } from 'node:fs';
import { readSmallLog } from '../io/read.js';
import { describeError, errorKind } from '../core/errors.js';
import type { Store } from '../store/store.js';
import { sanitizeUntrusted } from '../core/sanitize.js';
import { capUtf8, normaliseText } from '../core/text.js';
import { DEFAULT_TAG_WORDS, makeEntry, MAX_CONTENT_BYTES, parseTypedText, suffixedKey, tagsFor, type KnowledgeEntry } from './entry.js';
import { Deadline } from '../core/deadline.js';
import { follow } from '../store/follower.js';
import { keyFamilyLines, knowledgeFollowers } from './index.js';
import { parseEntryLine, readEntries } from './reader.js';
import { rotateIfDue, type RotateReport } from './rotate.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';

// Capture (SPEC §4.2): a taken key gets `-2`, `-3`, …: nothing dropped silently.

export interface Comment {
  bead: string;
  text: string;
  ts: number;
  source: string;
}

export interface CaptureContext {
  project: string;
  tagWords?: readonly string[];
}

const MAX_BEAD_CHARS = 128;

/** Sanitised, redacted (SPEC §4.6), capped. */
export function cleanContent(text: string): string {
  return capUtf8(sanitizeUntrusted(text), MAX_CONTENT_BYTES).trim();
}

function cleanBead(bead: string): string {
  return Array.from(sanitizeUntrusted(bead, { singleLine: true }))
    .slice(0, MAX_BEAD_CHARS)
    .join('');
}

/** 'skip' for `SKIP:`, undefined when it is not knowledge. */
function entryFromComment(comment: Comment, ctx: CaptureContext): KnowledgeEntry | 'skip' | undefined {
  const typed = parseTypedText(comment.text);
  if (typed === undefined || typed === 'skip') return typed;
  const content = cleanContent(typed.content);
  if (!content) return undefined;
  return makeEntry({
    type: typed.type,
    content,
    bead: cleanBead(comment.bead),
    source: comment.source,
    ts: comment.ts,
    project: ctx.project,
    tagWords: ctx.tagWords,
  });
}

export interface Appended {
  entry: KnowledgeEntry;
  /** 'duplicate': log or archive holds this content under this key family. */
  status: 'added' | 'duplicate';
}

/** The same content in the key family (`k`, `k-2`, …) is a duplicate; else the first free suffix. */
export function appendEntries(store: Store, entries: KnowledgeEntry[], progress: Progress = NO_PROGRESS): Appended[] {
  const results: Appended[] = [];
  if (entries.length === 0) return results;
  store.appendLines(store.knowledgePath, () => {
    const families = storedFamilies(store, new Set(entries.map((e) => e.key)), entries[0].project);
    const lines: string[] = [];
    for (const [i, candidate] of entries.entries()) {
      // thousands of comments: the lock is not held past the deadline (SPEC §2)
      store.deadline.check('recording the change');
      if (i % 256 === 0) progress(i, entries.length);
      const family = families.get(candidate.key) ?? { keys: new Set<string>(), contents: new Map<string, string>() };
      families.set(candidate.key, family);
      const norm = normaliseText(candidate.content);
      const existing = family.contents.get(norm);
      if (existing !== undefined) {
        results.push({ entry: { ...candidate, key: existing }, status: 'duplicate' });
        continue;
      }
      let n = 1;
      while (family.keys.has(suffixedKey(candidate.key, n))) n++;
      const entry = { ...candidate, key: suffixedKey(candidate.key, n) };
      family.keys.add(entry.key);
      family.contents.set(norm, entry.key);
      lines.push(JSON.stringify(entry));
      results.push({ entry, status: 'added' });
    }
    return lines;
  });
  return results;
}

interface Family {
  keys: Set<string>;
  contents: Map<string, string>;
}

/** From the index, or the files when catching up would take longer. */
function storedFamilies(store: Store, baseKeys: Set<string>, project: string | undefined): Map<string, Family> {
  if (existsSync(store.dbPath)) {
    try {
      return familiesFromIndex(store, baseKeys, project);
    } catch (err) {
      if (errorKind(err) === 'deadline') throw err;
      store.log.warn(`looking for duplicates in the files rather than the index (${describeError(err)})`);
    }
  }
  return keyFamilies([store.archivePath, store.knowledgePath], baseKeys, project, store.deadline);
}

/** About what reading the files takes. */
const CATCH_UP_MS = 150;

function familiesFromIndex(store: Store, baseKeys: Set<string>, project: string | undefined): Map<string, Family> {
  const db = store.database;
  // the one follower, on a budget: what it applies meanwhile is kept
  const catchUp = {
    deadline: new Deadline(Math.max(1, Math.min(CATCH_UP_MS, store.deadline.remaining() / 4))),
    warn: (m: string) => store.log.warn(m),
  };
  const followers = knowledgeFollowers(store);
  follow(db, followers.archive, catchUp);
  follow(db, followers.log, catchUp);
  const families = new Map<string, Family>();
  for (const base of baseKeys) {
    store.deadline.check('reading the stored entries');
    for (const line of keyFamilyLines(db, base)) {
      if (line.project !== '' && project !== undefined && line.project !== project) continue;
      if (baseOf(line.key, baseKeys) !== base) continue;
      addVersion(families, base, line.key, line.content);
    }
  }
  return families;
}

function addVersion(families: Map<string, Family>, base: string, key: string, content: string): void {
  let family = families.get(base);
  if (!family) families.set(base, (family = { keys: new Set(), contents: new Map() }));
  family.keys.add(key);
  family.contents.set(normaliseText(content), key);
}

// a byte search per key is cheapest for a hook's few keys; a backfill reads every line once
const SEARCHED_KEYS = 16;
/** A log rotates at 5000 lines (SPEC §4.5): one far beyond is not read whole by a hook. */
const LOG_CAP = 64 * 1024 * 1024;

function keyFamilies(paths: string[], baseKeys: Set<string>, project: string | undefined, deadline: Deadline): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const path of paths) {
    // a regular file, never through a link
    const buf = readSmallLog(path, LOG_CAP);
    if (buf === undefined) continue;
    for (const start of candidateLines(buf, baseKeys)) {
      deadline.check('reading the stored entries');
      const end = buf.indexOf(0x0a, start);
      const parsed = parseEntryLine(buf.toString('utf8', start, end < 0 ? buf.length : end));
      if (!parsed.ok) continue;
      const e = parsed.value;
      if (e.project !== undefined && project !== undefined && e.project !== project) continue;
      const base = baseOf(e.key, baseKeys);
      if (base !== undefined) addVersion(families, base, e.key, e.content);
    }
  }
  return families;
}

/** Keys are [a-z0-9-]: JSON never escapes them. */
function candidateLines(buf: Buffer, keys: Set<string>): Set<number> {
  const starts = new Set<number>();
  if (keys.size > SEARCHED_KEYS) {
    for (let at = 0; at < buf.length; at = buf.indexOf(0x0a, at) + 1 || buf.length) starts.add(at);
    return starts;
  }
  for (const key of keys) {
    const needle = Buffer.from(key);
    for (let at = buf.indexOf(needle); at >= 0; at = buf.indexOf(needle, at + needle.length)) {
      starts.add(buf.lastIndexOf(0x0a, at) + 1);
    }
  }
  return starts;
}

function baseOf(key: string, bases: Set<string>): string | undefined {
  if (bases.has(key)) return key;
  const m = /^(.*)-\d+$/.exec(key);
  return m && bases.has(m[1]) ? m[1] : undefined;
}

export interface CaptureReport {
  appended: Appended[];
  ignored: number;
  rotated?: RotateReport;
}

/** The append is the commit point: indexing and rotation after it are best effort, so no caller doubles an entry. */
export function captureComments(store: Store, comments: Comment[]): CaptureReport {
  const ctx = { project: store.project, tagWords: [...DEFAULT_TAG_WORDS, ...store.config.knowledge.tags] };
  const entries: KnowledgeEntry[] = [];
  let ignored = 0;
  for (const c of comments) {
    // stop before anything is recorded (SPEC §2)
    store.deadline.check('preparing the captures');
    const e = entryFromComment(c, ctx);
    if (e === undefined || e === 'skip') ignored++;
    else entries.push(e);
  }
  const report: CaptureReport = { appended: [], ignored };
  if (entries.length === 0) return report;
  report.appended = appendEntries(store, entries);
  afterAppend(store, report);
  return report;
}

function afterAppend(store: Store, report: CaptureReport): void {
  try {
    if (existsSync(store.dbPath)) store.refresh(knowledgeFollowers(store).log);
  } catch (err) {
    store.log.warn(`captured; indexing is left to the next reader (${describeError(err)})`);
  }
  try {
    report.rotated = rotateIfDue(store.knowledgePath, store.archivePath, {
      deadline: store.deadline,
      within: store.dir,
      countFile: store.lineCountPath,
    });
  } catch (err) {
    store.log.warn(`captured; rotation is left to the next run (${describeError(err)})`);
  }
}

export interface ImportReport {
  read: number;
  appended: number;
  duplicates: number;
  unreadable: number;
}

/** Cleaned as a capture is; entries already held are skipped. */
export function importLavraLog(store: Store, path: string, progress: Progress = NO_PROGRESS): ImportReport {
  const tagWords = [...DEFAULT_TAG_WORDS, ...store.config.knowledge.tags];
  const entries: KnowledgeEntry[] = [];
  let read = 0;
  let unreadable = 0;
  for (const { entry } of readEntries(path, (m) => {
    unreadable++;
    store.log.warn(m);
  })) {
    read++;
    const content = cleanContent(entry.content);
    if (!content) continue;
    entries.push({
      key: entry.key,
      type: entry.type,
      content,
      source: entry.source || 'lavra',
      tags: tagsFor(entry.type, content, tagWords),
      ts: entry.ts,
      bead: cleanBead(entry.bead),
      project: store.project,
    });
  }
  const appended = appendEntries(store, entries, progress);
  const report: CaptureReport = { appended, ignored: 0 };
  afterAppend(store, report);
  const added = appended.filter((a) => a.status === 'added').length;
  return { read, appended: added, duplicates: appended.length - added, unreadable };
}
