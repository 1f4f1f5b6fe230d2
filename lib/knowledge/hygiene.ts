import { existsSync, statSync, utimesSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { parseJsonLine, readLines } from '../io/jsonl.js';
import { walkFiles } from '../io/walk.js';
import { readSmallFile } from '../io/read.js';
import { normaliseText } from '../core/text.js';
import type { Store } from '../store/store.js';
import type { KnowledgeEntry } from './entry.js';
import { versionOf } from './index.js';
import { isCommandLike, stripShellResidue } from './noise.js';
import { parseEntryLine } from './reader.js';
import { cleanContent } from './capture.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';

// `cairn sanitize` (SPEC §4.5): the local working set. From the shared log it builds
// knowledge.active.jsonl — readable, no shell residue, no duplicates, no stale entries, the latest
// curation status — and knowledge.audit.jsonl, one record per decision and a closing summary. The log
// itself is never touched. Normalisation is only for comparing: what is kept keeps its case.

export interface AuditRecord {
  ts: number;
  action: 'skip_unreadable' | 'drop_superseded' | 'filter_noise' | 'trim_residue' | 'duplicate_key' | 'duplicate_content' | 'drop_stale' | 'flag_needs_review' | 'summary';
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
  /** The summary the last `cairn sanitize` closed its audit with, and when; undefined before the first run. */
  summary?: SanitizeReport;
  ts?: number;
  /** How many records of each action (the summary aside). */
  byAction: Record<string, number>;
  /** The last `last` records that are not the summary, as written. */
  recent: AuditRecord[];
}

/** What the last `cairn sanitize` left out or flagged (knowledge.audit.jsonl, rewritten by each run), in one pass. */
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

/** Build the active cache and the audit from the store's log. */
export function sanitizeKnowledge(store: Store, now: number, progress: Progress = NO_PROGRESS): SanitizeReport {
  const ts = Math.floor(now / 1000);
  const logStat = statOf(store.knowledgePath); // before reading: a capture meanwhile leaves the cache stale, as it should
  const audit: AuditRecord[] = [];
  const report: SanitizeReport = { read: 0, active: 0, unreadable: 0, superseded: 0, noise: 0, trimmed: 0, duplicateKey: 0, duplicateContent: 0, stale: 0, needsReview: 0 };

  // the latest line of each version (SPEC §4.5: curation appends, later lines win), in log order
  const latest = new Map<string, KnowledgeEntry>();
  let lineNo = 0;
  for (const line of readLines(store.knowledgePath)) {
    lineNo++;
    if (!line.text.trim()) continue;
    const parsed = parseEntryLine(line.text);
    if (!parsed.ok) {
      report.unreadable++;
      audit.push({ ts, action: 'skip_unreadable', line: lineNo, offset: line.offset, reason: parsed.reason });
      continue;
    }
    report.read++;
    const version = `${parsed.value.project ?? ''}\u0000${versionOf(parsed.value)}`;
    latest.delete(version); // re-inserted at its latest position
    latest.set(version, parsed.value);
  }

  // progress: each entry is cleaned, then its anchors are checked (two steps of the same weight)
  const steps = 2 * latest.size;
  let step = 0;
  const kept: KnowledgeEntry[] = [];
  for (const entry of latest.values()) {
    if (++step % 256 === 0) progress(step, steps);
    if (entry.status === 'superseded') {
      report.superseded++;
      audit.push({ ts, action: 'drop_superseded', key: entry.key, reason: entry.superseded_by ? `superseded by ${entry.superseded_by}` : 'superseded' });
      continue;
    }
    if (isCommandLike(entry.content)) {
      report.noise++;
      audit.push({ ts, action: 'filter_noise', key: entry.key, reason: 'command_like_content' });
      continue;
    }
    const content = cleanContent(stripShellResidue(entry.content));
    if (content !== entry.content.trim()) {
      report.trimmed++;
      audit.push({ ts, action: 'trim_residue', key: entry.key, reason: 'shell residue or unsafe characters removed' });
    }
    kept.push({ ...entry, content });
  }

  const unique = newestUnique(kept, ts, audit, report);
  const anchorsOf = anchorChecker(store.location.root);
  const active: KnowledgeEntry[] = [];
  for (const [i, entry] of unique.entries()) {
    if (i % 256 === 0) progress(latest.size + Math.round(((i + 1) * latest.size) / unique.length), steps);
    const anchors = anchorsOf(entry.content);
    if (anchors.files.length > 0 && anchors.missingFiles.length === anchors.files.length) {
      report.stale++;
      audit.push({ ts, action: 'drop_stale', key: entry.key, reason: 'missing_file_anchor', anchors });
      continue;
    }
    if (anchors.missingFiles.length || anchors.missingSymbols.length) {
      report.needsReview++;
      audit.push({ ts, action: 'flag_needs_review', key: entry.key, reason: anchors.missingFiles.length ? 'missing_file_anchor' : 'missing_symbol_anchor', anchors });
      active.push({ ...entry, status: 'needs_review' });
      continue;
    }
    active.push(entry);
  }
  report.active = active.length;
  audit.push({ ts, action: 'summary', summary: report });

  store.writeFile(store.auditPath, audit.map((r) => JSON.stringify(r) + '\n').join(''));
  store.writeFile(store.activePath, active.map((e) => JSON.stringify(e) + '\n').join(''));
  // fresh for exactly this state of the log (auto-recall compares the two times)
  if (logStat) utimesSync(store.activePath, logStat.atimeMs / 1000, logStat.mtimeMs / 1000);
  return report;
}

/** Dedupe by key, then by normalised content, keeping the newest (by time, then log order); output in log order. */
function newestUnique(entries: KnowledgeEntry[], ts: number, audit: AuditRecord[], report: SanitizeReport): KnowledgeEntry[] {
  const order = entries.map((e, i) => ({ e, i })).sort((a, b) => b.e.ts - a.e.ts || b.i - a.i); // newest first
  const keys = new Set<string>();
  const contents = new Map<string, string>();
  const keep = new Set<number>();
  for (const { e, i } of order) {
    const scope = e.project ?? '';
    const key = `${scope}\u0000${e.key}`;
    const content = `${scope}\u0000${normaliseText(e.content)}`;
    if (keys.has(key)) {
      report.duplicateKey++;
      audit.push({ ts, action: 'duplicate_key', key: e.key, reason: 'a newer entry has this key' });
      continue;
    }
    if (contents.has(content)) {
      report.duplicateContent++;
      audit.push({ ts, action: 'duplicate_content', key: e.key, reason: `same content as ${contents.get(content)}` });
      continue;
    }
    keys.add(key);
    contents.set(content, e.key);
    keep.add(i);
  }
  return entries.filter((_, i) => keep.has(i));
}

// `dir/file.ext` (relative, at least one directory), not part of a URL or a home or absolute path.
const FILE_ANCHOR = /(?<![\w/.~:-])((?:\.{1,2}\/)?[\w.-]*[\w-]\/(?:[\w.-]+\/)*[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])/g;
// `symbol`, `symbol()`, `a.b.c` between backticks: an identifier, not a command or a phrase.
const SYMBOL_ANCHOR = /`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:\(\))?`/g;
// Bounds on reading the project for symbols: the sanitiser runs in the background after captures.
const MAX_SCANNED_FILES = 5000;
const MAX_FILE_BYTES = 1 << 20;
const MAX_TOTAL_BYTES = 64 << 20;

/** The anchors a text names and which of them are missing under `root`; the project's files are read once, lazily. */
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
            texts.push(readSmallFile(path, MAX_FILE_BYTES)?.toString('utf8') ?? ''); // a regular file, at most the cap
          } catch {
            // unreadable: not a place to find a symbol
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

/** Does `relative` name an existing path inside `root`? (A path that climbs out counts as missing.) */
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

/**
 * The active cache (SPEC §4.5) is fresh when `cairn sanitize` built it from the log as it is now: the
 * sanitiser gives it the log's modification time, and any later capture moves the log's on.
 */
export function activeCacheFresh(store: Store): boolean {
  try {
    return Math.abs(statSync(store.activePath).mtimeMs - statSync(store.knowledgePath).mtimeMs) < 1;
  } catch {
    return false;
  }
}
