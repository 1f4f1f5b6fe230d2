import { readSmallFile } from '../io/read.js';
import { parseJson } from '../core/json.js';
import stringify from 'fast-json-stable-stringify';
import { readLines } from '../io/jsonl.js';
import { writeFileAtomic } from '../io/atomic.js';
import { CairnError } from '../core/errors.js';
import { sha256, normaliseText } from '../core/text.js';
import type { Store } from '../store/store.js';
import type { CurationStatus, KnowledgeEntry } from './entry.js';
import { versionOf } from './index.js';
import { parseEntryLine, toEntry } from './reader.js';
import { anchorChecker } from './hygiene.js';

// Shared curation (SPEC §4.5): the review-gated way to improve the committed log without rewriting it.
// `--dry-run` gathers candidates — duplicates, stale entries, entries another one says it supersedes —
// and writes a proposal: the exact lines it would append, each with a review_reason, and a hash of them
// over canonical JSON (so key order does not change it). `--apply` appends those lines only when the
// proposal still hashes to what the reviewer confirmed. The log is only ever appended to.

export interface Proposal {
  /** The exact JSONL lines to append. */
  lines: string[];
  hash: string;
}

/** sha256 of the proposal's lines as canonical JSON (fast-json-stable-stringify). */
export function proposalHash(lines: string[]): string {
  return sha256(stringify(lines.map((l) => JSON.parse(l) as unknown)));
}

/** The visible entries of this project: the latest line of each version, in log order. */
function currentEntries(store: Store): KnowledgeEntry[] {
  const latest = new Map<string, KnowledgeEntry>();
  for (const line of readLines(store.knowledgePath)) {
    const parsed = parseEntryLine(line.text);
    if (!parsed.ok) continue;
    const e = parsed.value;
    if (e.project !== undefined && e.project !== store.project) continue;
    const version = versionOf(e);
    latest.delete(version);
    latest.set(version, e);
  }
  return [...latest.values()];
}

/** An existing entry with curation fields set, as the line that records them. */
function curated(e: KnowledgeEntry, status: CurationStatus, reason: string, extra: Partial<KnowledgeEntry>, project: string): string {
  const { status: _s, superseded_by: _b, supersedes: _p, merged_from: _m, review_source: _rs, review_reason: _rr, ...base } = e;
  return JSON.stringify({ ...base, project: e.project ?? project, status, ...extra, review_source: 'cairn curate', review_reason: reason });
}

/** Gather candidates and build the proposal (nothing is written to the log). */
export function proposeCuration(store: Store): Proposal {
  const entries = currentEntries(store).filter((e) => e.status !== 'superseded');
  const lines: string[] = [];
  const decided = new Set<string>(); // keys already given a line

  // duplicates: the same normalised content under several keys — the newest becomes canonical
  const byContent = new Map<string, KnowledgeEntry[]>();
  for (const e of entries) {
    const norm = normaliseText(e.content);
    byContent.set(norm, [...(byContent.get(norm) ?? []), e]);
  }
  for (const group of byContent.values()) {
    const keys = new Set(group.map((e) => e.key));
    if (keys.size < 2) continue;
    const [newest, ...older] = [...group].sort((a, b) => b.ts - a.ts); // one version per key: the keys are distinct
    const olderKeys = older.map((e) => e.key);
    lines.push(curated(newest, 'canonical', `keeps ${olderKeys.length} duplicate(s) of the same content: ${olderKeys.join(', ')}`, { merged_from: olderKeys, supersedes: olderKeys }, store.project));
    for (const e of older) lines.push(curated(e, 'superseded', `duplicate of ${newest.key}`, { superseded_by: newest.key }, store.project));
    for (const k of [newest.key, ...olderKeys]) decided.add(k);
  }

  // superseded: an entry another one says it supersedes, not yet marked
  const supersededBy = new Map<string, string>();
  for (const e of entries) for (const k of e.supersedes ?? []) if (k !== e.key) supersededBy.set(k, e.key);
  for (const e of entries) {
    const by = supersededBy.get(e.key);
    if (by === undefined || decided.has(e.key)) continue;
    lines.push(curated(e, 'superseded', `${by} supersedes it`, { superseded_by: by }, store.project));
    decided.add(e.key);
  }

  // stale: every file the entry names is gone from the project — for a person to review, not to drop
  const anchorsOf = anchorChecker(store.location.root);
  for (const e of entries) {
    if (decided.has(e.key) || e.status === 'needs_review') continue;
    const a = anchorsOf(e.content);
    if (a.files.length === 0 || a.missingFiles.length < a.files.length) continue;
    lines.push(curated(e, 'needs_review', `the files it names no longer exist: ${a.missingFiles.join(', ')}`, {}, store.project));
  }
  return { lines, hash: proposalHash(lines) };
}

/** Write the proposal file; `within` is the directory no symbolic link may lead out of (SPEC §2). */
export function writeProposal(path: string, proposal: Proposal, within: string): void {
  writeFileAtomic(path, JSON.stringify(proposal, null, 1) + '\n', within);
}

export interface Applied {
  appended: number;
  /** Lines whose entry already has that status (a proposal applied twice). */
  already: number;
}

const PROPOSAL_CAP = 16 * 1024 * 1024;

/**
 * Append a reviewed proposal. Refused when its lines no longer hash to `confirm` (changed since review),
 * when a line is not a curated entry of this project with a review_reason, or without a confirmation.
 */
export function applyProposal(store: Store, proposalPath: string, confirm: string): Applied {
  let proposal: Proposal;
  let text: string;
  try {
    text = readSmallFile(proposalPath, PROPOSAL_CAP)?.toString('utf8') ?? '';
  } catch (err) {
    throw new CairnError('input', `cannot read the proposal ${proposalPath}: ${(err as Error).message}`);
  }
  proposal = parseJson(text, `the proposal ${proposalPath}`) as Proposal;
  if (!Array.isArray(proposal.lines) || !proposal.lines.every((l) => typeof l === 'string')) throw new CairnError('input', `${proposalPath} is not a curation proposal`);
  const hash = proposalHash(proposal.lines);
  if (hash !== confirm) throw new CairnError('input', `the proposal changed since review: its lines hash to ${hash}, not ${confirm}; run cairn curate --dry-run again`);
  const entries = proposal.lines.map((line, i) => {
    const parsed = toEntry(parseJson(line, `line ${i + 1} of the proposal`));
    if (!parsed.ok || !parsed.value.status || !parsed.value.review_reason) throw new CairnError('input', `line ${i + 1} of the proposal is not a curated entry with a status and a review_reason`);
    if (parsed.value.project !== undefined && parsed.value.project !== store.project) throw new CairnError('input', `line ${i + 1} of the proposal belongs to another project`);
    if (line.includes('\n')) throw new CairnError('input', `line ${i + 1} of the proposal holds a newline`);
    return { line, entry: parsed.value };
  });
  const status = new Map(currentEntries(store).map((e) => [versionOf(e), e.status]));
  const fresh = entries.filter(({ entry }) => status.get(versionOf(entry)) !== entry.status);
  store.appendLines(store.knowledgePath, () => fresh.map((f) => f.line));
  return { appended: fresh.length, already: entries.length - fresh.length };
}
