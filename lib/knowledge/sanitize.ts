import { closeSync, constants, existsSync, openSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { HashTable, hash52, NumberList } from '../core/hash-table.js';
import { mkdirNoFollow } from '../io/safe.js';
import { CairnError } from '../core/errors.js';
import { parseJsonLine, readLines } from '../io/jsonl.js';
import { walkFiles } from '../io/walk.js';
import { readSmallFile } from '../io/read.js';
import { normaliseText } from '../core/text.js';
import type { Store } from '../store/store.js';
import type { KnowledgeEntry } from './entry.js';
import { isCommandLike, stripShellResidue } from './noise.js';
import { parseEntryLine } from './reader.js';
import { cleanContent } from './capture.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';

// `cairn sanitize` (SPEC §4.5): the local active cache and its audit; the shared log is never touched.

export interface AuditRecord {
  ts: number;
  action:
    | 'skip_unreadable'
    | 'drop_superseded'
    | 'filter_noise'
    | 'trim_residue'
    | 'duplicate_key'
    | 'duplicate_content'
    | 'drop_stale'
    | 'flag_needs_review'
    | 'summary';
  key?: string;
  reason?: string;
  [detail: string]: unknown;
}

export interface SanitizeReport {
  read: number;
  active: number;
  unreadable: number;
  superseded: number;
  noise: number;
  trimmed: number;
  duplicateKey: number;
  duplicateContent: number;
  stale: number;
  needsReview: number;
}

export interface Anchors {
  files: string[];
  symbols: string[];
  missingFiles: string[];
  missingSymbols: string[];
}

export interface AuditDigest {
  summary?: SanitizeReport;
  ts?: number;
  byAction: Record<string, number>;
  recent: AuditRecord[];
}

export function readAudit(store: Store, last = 20): AuditDigest {
  const digest: AuditDigest = { byAction: {}, recent: [] };
  for (const line of readLines(store.auditPath)) {
    const parsed = parseJsonLine<AuditRecord>(line.text);
    if (!parsed.ok || typeof parsed.value.action !== 'string') continue;
    const r = parsed.value;
    if (r.action === 'summary') {
      digest.summary = r.summary as SanitizeReport;
      digest.ts = r.ts;
      continue;
    }
    digest.byAction[r.action] = (digest.byAction[r.action] ?? 0) + 1;
    digest.recent.push(r);
    if (digest.recent.length > last) digest.recent.shift();
  }
  return digest;
}

/** Three passes holding a few numbers an entry, never the entries. */
export function sanitizeKnowledge(store: Store, now: number, progress: Progress = NO_PROGRESS): SanitizeReport {
  const ts = Math.floor(now / 1000);
  // before reading: a capture meanwhile leaves the cache stale, as it should
  const logStat = statOf(store.knowledgePath);
  const report: SanitizeReport = {
    read: 0,
    active: 0,
    unreadable: 0,
    superseded: 0,
    noise: 0,
    trimmed: 0,
    duplicateKey: 0,
    duplicateContent: 0,
    stale: 0,
    needsReview: 0,
  };
  const candidates = `${store.activePath}.candidates-${process.pid}.tmp`;
  try {
    store.writeFile(store.auditPath, (auditFd) => {
      const pass: Pass = { store, ts, report, audit: (r) => writeLine(auditFd, r), progress };
      const kept = latestCleaned(pass, candidates);
      if (statOf(store.knowledgePath)?.ino !== logStat?.ino)
        throw new CairnError('store', 'the knowledge log was rotated while it was read; run cairn sanitize again');
      writeActive(pass, candidates, newestUnique(kept));
      pass.audit({ ts, action: 'summary', summary: report });
    });
  } finally {
    rmSync(candidates, { force: true });
  }
  // fresh for exactly this state of the log (auto-recall compares the times)
  if (logStat) utimesSync(store.activePath, logStat.atimeMs / 1000, logStat.mtimeMs / 1000);
  return report;
}

interface Pass {
  store: Store;
  ts: number;
  report: SanitizeReport;
  audit: (record: AuditRecord) => void;
  progress: Progress;
}

interface Candidates {
  ts: NumberList;
  key: NumberList;
  content: NumberList;
}

/** SPEC §4.5: superseded and residue out. */
function latestCleaned({ store, ts, report, audit, progress }: Pass, candidates: string): Candidates {
  const versions = new NumberList();
  const latest = new HashTable();
  const bytes = statOf(store.knowledgePath)?.size ?? 0; // each of the two passes reads it once
  let lineNo = 0;
  for (const line of readLines(store.knowledgePath)) {
    if (++lineNo % CHECK_EVERY === 0) {
      store.deadline.check('sanitizing the knowledge log');
      progress(line.offset, 2 * bytes);
    }
    if (!line.text.trim()) continue;
    const parsed = parseEntryLine(line.text);
    if (!parsed.ok) {
      report.unreadable++;
      audit({ ts, action: 'skip_unreadable', line: lineNo, offset: line.offset, reason: parsed.reason });
      continue;
    }
    report.read++;
    const e = parsed.value;
    const version = hash52(`${e.project ?? ''}\u0000${e.key}\u0000${normaliseText(e.content)}`);
    latest.set(version, versions.length);
    versions.push(version);
  }
  const kept: Candidates = { ts: new NumberList(), key: new NumberList(), content: new NumberList() };
  writeLines(candidates, store.dir, (out) => {
    let j = -1;
    for (const entry of entries(store.knowledgePath)) {
      if (++j % CHECK_EVERY === 0) {
        store.deadline.check('sanitizing the knowledge log');
        progress(bytes + Math.round((bytes * j) / Math.max(1, versions.length)), 2 * bytes);
      }
      if (j >= versions.length) break; // appended since the first pass: the cache is stale for them anyway
      if (latest.get(versions.at(j)) !== j) continue;
      if (entry.status === 'superseded') {
        report.superseded++;
        audit({
          ts,
          action: 'drop_superseded',
          key: entry.key,
          reason: entry.superseded_by ? `superseded by ${entry.superseded_by}` : 'superseded',
        });
        continue;
      }
      if (isCommandLike(entry.content)) {
        report.noise++;
        audit({ ts, action: 'filter_noise', key: entry.key, reason: 'command_like_content' });
        continue;
      }
      const content = cleanContent(stripShellResidue(entry.content));
      if (content !== entry.content.trim()) {
        report.trimmed++;
        audit({ ts, action: 'trim_residue', key: entry.key, reason: 'shell residue or unsafe characters removed' });
      }
      const scope = entry.project ?? '';
      kept.ts.push(entry.ts);
      kept.key.push(hash52(`${scope}\u0000${entry.key}`));
      kept.content.push(hash52(`${scope}\u0000${normaliseText(content)}`));
      writeLine(out, { ...entry, content });
    }
  });
  return kept;
}

/** Index → the kept one's, or -1 for a newer one of its key. */
function newestUnique(kept: Candidates): Map<number, number> {
  const order = Uint32Array.from({ length: kept.ts.length }, (_, i) => i).sort((a, b) => kept.ts.at(b) - kept.ts.at(a) || b - a);
  const keys = new HashTable(order.length, false);
  const contents = new HashTable(order.length);
  const duplicateOf = new Map<number, number>();
  for (const i of order) {
    if (keys.has(kept.key.at(i))) duplicateOf.set(i, -1);
    else if (contents.has(kept.content.at(i))) duplicateOf.set(i, contents.get(kept.content.at(i))!);
    else {
      keys.add(kept.key.at(i));
      contents.set(kept.content.at(i), i);
    }
  }
  return duplicateOf;
}

/** Duplicates audited, anchors checked (SPEC §4.5), the rest into the cache. */
function writeActive({ store, ts, report, audit }: Pass, candidates: string, duplicateOf: Map<number, number>): void {
  const anchorsOf = anchorChecker(store.location.root);
  const named = new Set(duplicateOf.values());
  const keyOf = new Map<number, string>();
  const waiting: { key: string; of: number }[] = []; // duplicates of an entry further down
  const duplicate = (key: string, of: number) => {
    if (of < 0) {
      report.duplicateKey++;
      audit({ ts, action: 'duplicate_key', key, reason: 'a newer entry has this key' });
    } else {
      report.duplicateContent++;
      audit({ ts, action: 'duplicate_content', key, reason: `same content as ${keyOf.get(of)}` });
    }
  };
  store.writeFile(store.activePath, (activeFd) => {
    let k = -1;
    for (const entry of entries(candidates)) {
      if (++k % CHECK_EVERY === 0) store.deadline.check('sanitizing the knowledge log');
      if (named.has(k)) keyOf.set(k, entry.key);
      const of = duplicateOf.get(k);
      if (of !== undefined) {
        if (of < 0 || keyOf.has(of)) duplicate(entry.key, of);
        else waiting.push({ key: entry.key, of });
        continue;
      }
      const anchors = anchorsOf(entry.content);
      if (anchors.files.length > 0 && anchors.missingFiles.length === anchors.files.length) {
        report.stale++;
        audit({ ts, action: 'drop_stale', key: entry.key, reason: 'missing_file_anchor', anchors });
        continue;
      }
      report.active++;
      if (anchors.missingFiles.length || anchors.missingSymbols.length) {
        report.needsReview++;
        audit({
          ts,
          action: 'flag_needs_review',
          key: entry.key,
          reason: anchors.missingFiles.length ? 'missing_file_anchor' : 'missing_symbol_anchor',
          anchors,
        });
        writeLine(activeFd, { ...entry, status: 'needs_review' });
      } else writeLine(activeFd, entry);
    }
  });
  for (const w of waiting) duplicate(w.key, w.of);
}

/** Between two looks at the deadline (lib/store/background.ts). */
const CHECK_EVERY = 1024;

function* entries(path: string): Generator<KnowledgeEntry> {
  for (const line of readLines(path)) {
    const parsed = line.text.trim() ? parseEntryLine(line.text) : undefined;
    if (parsed?.ok) yield parsed.value;
  }
}

function writeLine(fd: number, record: unknown): void {
  writeSync(fd, JSON.stringify(record) + '\n');
}

function writeLines(path: string, within: string, write: (fd: number) => void): void {
  mkdirNoFollow(within, dirname(path));
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    write(fd);
  } finally {
    closeSync(fd);
  }
}

// relative, at least one directory; not in a URL, a home or absolute path
const FILE_ANCHOR = /(?<![\w/.~:-])((?:\.{1,2}\/)?[\w.-]*[\w-]\/(?:[\w.-]+\/)*[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])/g;
// `symbol`, `symbol()`, `a.b.c` in backticks: an identifier, not a command or phrase
const SYMBOL_ANCHOR = /`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:\(\))?`/g;
// bounded: the sanitiser reads the project in the background after captures
const MAX_SCANNED_FILES = 5000;
const MAX_FILE_BYTES = 1 << 20;
const MAX_TOTAL_BYTES = 64 << 20;

export function anchorChecker(root: string): (text: string) => Anchors {
  let corpus: string[] | undefined;
  const files = () => {
    if (!corpus) {
      const texts: string[] = [];
      let total = 0;
      walkFiles(
        root,
        (path) => {
          try {
            const size = statSync(path).size;
            if (size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES) return;
            total += size;
            texts.push(readSmallFile(path, MAX_FILE_BYTES)?.toString('utf8') ?? ''); // a regular file, capped
          } catch {
            // unreadable: no symbol found there
          }
        },
        MAX_SCANNED_FILES,
      );
      corpus = texts;
    }
    return corpus;
  };
  return (text) => {
    const fileAnchors = [...new Set([...text.matchAll(FILE_ANCHOR)].map((m) => m[1]).filter((p) => !p.includes('://')))];
    const symbols = [...new Set([...text.matchAll(SYMBOL_ANCHOR)].map((m) => m[1]).filter((s) => s.length >= 3))];
    const missingFiles = fileAnchors.filter((p) => !existsInside(root, p));
    const missingSymbols = symbols.length ? symbols.filter((s) => !files().some((t) => t.includes(s))) : [];
    return { files: fileAnchors, symbols, missingFiles, missingSymbols };
  };
}

/** One that climbs out of `root` counts as missing. */
function existsInside(root: string, relative: string): boolean {
  if (isAbsolute(relative)) return false;
  const path = normalize(join(root, relative));
  return (path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)) && existsSync(path);
}

function statOf(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Fresh when built from the log as it is now: it takes the log's mtime. */
export function activeCacheFresh(store: Store): boolean {
  try {
    return Math.abs(statSync(store.activePath).mtimeMs - statSync(store.knowledgePath).mtimeMs) < 1;
  } catch {
    return false;
  }
}
