import { readSmallFile } from '../io/read.js';
import { parseJson } from '../core/json.js';
import stringify from 'fast-json-stable-stringify';
import { readLines } from '../io/jsonl.js';
import { writeFileAtomic } from '../io/atomic.js';
import { CairnError } from '../core/errors.js';
import { sha256, normaliseText } from '../core/text.js';
import { HashTable, hash52, NumberList } from '../core/hash-table.js';
import type { Store } from '../store/store.js';
import type { CurationStatus, KnowledgeEntry } from './entry.js';
import { versionOf } from './index.js';
import { parseEntryLine, toEntry } from './reader.js';
import { anchorChecker } from './sanitize.js';

// Curation (SPEC §4.5): `--dry-run` proposes lines and their hash; `--apply` appends them only if the hash still matches.

export interface Proposal {
  lines: string[];
  hash: string;
}

export function proposalHash(lines: string[]): string {
  return sha256(stringify(lines.map((l) => JSON.parse(l) as unknown)));
}

/** Unreadable lines skipped: `cairn sanitize` audits them. */
function* projectEntries(store: Store): Generator<KnowledgeEntry> {
  let n = 0;
  for (const line of readLines(store.knowledgePath)) {
    if (++n % CHECK_EVERY === 0) store.deadline.check('reading the knowledge log');
    const parsed = line.text.trim() ? parseEntryLine(line.text) : undefined;
    if (parsed?.ok && (parsed.value.project === undefined || parsed.value.project === store.project)) yield parsed.value;
  }
}

const CHECK_EVERY = 1024;

function curated(e: KnowledgeEntry, status: CurationStatus, reason: string, extra: Partial<KnowledgeEntry>, project: string): string {
  const { status: _s, superseded_by: _b, supersedes: _p, merged_from: _m, review_source: _rs, review_reason: _rr, ...base } = e;
  return JSON.stringify({
    ...base,
    project: e.project ?? project,
    status,
    ...extra,
    review_source: 'cairn curate',
    review_reason: reason,
  });
}

/** Nothing written; the second reading keeps only the entries proposed. */
export function proposeCuration(store: Store): Proposal {
  const versions = new NumberList();
  const contents = new NumberList();
  const superseded = new NumberList();
  const latest = new HashTable();
  const says: { at: number; key: string; supersedes: string[] }[] = [];
  for (const e of projectEntries(store)) {
    const version = hash52(`${e.key}\u0000${normaliseText(e.content)}`); // versionOf, as a number
    if (e.supersedes?.length) says.push({ at: versions.length, key: e.key, supersedes: e.supersedes });
    latest.set(version, versions.length);
    versions.push(version);
    contents.push(hash52(normaliseText(e.content)));
    superseded.push(e.status === 'superseded' ? 1 : 0);
  }
  const visible = (j: number) => latest.get(versions.at(j)) === j && superseded.at(j) === 0;
  const sameContent = new HashTable();
  for (let j = 0; j < versions.length; j++) if (visible(j)) sameContent.set(contents.at(j), (sameContent.get(contents.at(j)) ?? 0) + 1);
  const supersededBy = new Map<string, string>();
  for (const s of says) if (visible(s.at)) for (const k of s.supersedes) if (k !== s.key) supersededBy.set(k, s.key);

  // the same content under several keys
  const groups = new Map<number, KnowledgeEntry[]>();
  const named: KnowledgeEntry[] = [];
  const stale: { e: KnowledgeEntry; missing: string[] }[] = [];
  const anchorsOf = anchorChecker(store.location.root);
  let j = -1;
  for (const e of projectEntries(store)) {
    if (++j >= versions.length) break; // appended since the first reading
    if (!visible(j)) continue;
    if (sameContent.get(contents.at(j))! > 1) groups.set(contents.at(j), [...(groups.get(contents.at(j)) ?? []), e]);
    if (supersededBy.has(e.key)) named.push(e);
    if (e.status === 'needs_review') continue;
    const a = anchorsOf(e.content);
    if (a.files.length > 0 && a.missingFiles.length === a.files.length) stale.push({ e, missing: a.missingFiles });
  }

  const lines: string[] = [];
  const decided = new Set<string>();
  // the newest becomes canonical
  for (const group of groups.values()) {
    const [newest, ...older] = [...group].sort((a, b) => b.ts - a.ts);
    const olderKeys = older.map((e) => e.key);
    lines.push(
      curated(
        newest,
        'canonical',
        `keeps ${olderKeys.length} duplicate(s) of the same content: ${olderKeys.join(', ')}`,
        { merged_from: olderKeys, supersedes: olderKeys },
        store.project,
      ),
    );
    for (const e of older) lines.push(curated(e, 'superseded', `duplicate of ${newest.key}`, { superseded_by: newest.key }, store.project));
    for (const k of [newest.key, ...olderKeys]) decided.add(k);
  }
  // superseded by another entry, not yet marked
  for (const e of named) {
    if (decided.has(e.key)) continue;
    const by = supersededBy.get(e.key)!;
    lines.push(curated(e, 'superseded', `${by} supersedes it`, { superseded_by: by }, store.project));
    decided.add(e.key);
  }
  // stale: every file it names is gone — for a person to review, not to drop
  for (const { e, missing } of stale) {
    if (!decided.has(e.key))
      lines.push(curated(e, 'needs_review', `the files it names no longer exist: ${missing.join(', ')}`, {}, store.project));
  }
  return { lines, hash: proposalHash(lines) };
}

export function writeProposal(path: string, proposal: Proposal, within: string): void {
  writeFileAtomic(path, JSON.stringify(proposal, null, 1) + '\n', within);
}

export interface Applied {
  appended: number;
  /** Already of that status (a proposal applied twice). */
  already: number;
}

const PROPOSAL_CAP = 16 * 1024 * 1024;

/** Refused when its lines no longer hash to `confirm` or are not curated entries. */
export function applyProposal(store: Store, proposalPath: string, confirm: string): Applied {
  let text: string;
  try {
    text = readSmallFile(proposalPath, PROPOSAL_CAP)?.toString('utf8') ?? '';
  } catch (err) {
    throw new CairnError('input', `cannot read the proposal ${proposalPath}: ${(err as Error).message}`);
  }
  const proposal = parseJson(text, `the proposal ${proposalPath}`) as Proposal;
  if (!Array.isArray(proposal.lines) || !proposal.lines.every((l) => typeof l === 'string'))
    throw new CairnError('input', `${proposalPath} is not a curation proposal`);
  const hash = proposalHash(proposal.lines);
  if (hash !== confirm)
    throw new CairnError(
      'input',
      `the proposal changed since review: its lines hash to ${hash}, not ${confirm}; run cairn curate --dry-run again`,
    );
  const entries = proposal.lines.map((line, i) => {
    const parsed = toEntry(parseJson(line, `line ${i + 1} of the proposal`));
    if (!parsed.ok || !parsed.value.status || !parsed.value.review_reason)
      throw new CairnError('input', `line ${i + 1} of the proposal is not a curated entry with a status and a review_reason`);
    if (parsed.value.project !== undefined && parsed.value.project !== store.project)
      throw new CairnError('input', `line ${i + 1} of the proposal belongs to another project`);
    if (line.includes('\n')) throw new CairnError('input', `line ${i + 1} of the proposal holds a newline`);
    return { line, entry: parsed.value };
  });
  // the current status of each version (its latest line wins)
  const status = new Map(entries.map(({ entry }) => [versionOf(entry), undefined as string | undefined]));
  for (const e of projectEntries(store)) if (status.has(versionOf(e))) status.set(versionOf(e), e.status);
  const fresh = entries.filter(({ entry }) => status.get(versionOf(entry)) !== entry.status);
  store.appendLines(store.knowledgePath, () => fresh.map((f) => f.line));
  return { appended: fresh.length, already: entries.length - fresh.length };
}
