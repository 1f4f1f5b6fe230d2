import { rmSync } from 'node:fs';
import { writeFileAtomic } from '../io/atomic.js';
import type { Store } from '../store/store.js';
import { MAX_FINDING_SUMMARY_CHARS, MAX_ROLE_CHARS, MAX_SCOPE_CHARS, type EventPayload, type VerdictDigest } from '../events/types.js';
import { parseVerdict, type Verdict } from './verdict.js';
import { evidenceLevel, type EvidenceLevel } from './evidence.js';
import { extractPatterns, type Extracted } from './extract.js';
import { sha256 } from '../core/text.js';
import { NEAR_DUPLICATE, ruleKey, similarity, type RuleKey } from './identity.js';
import { nextUlid, patternId } from '../core/ids.js';
import { nowMs } from '../core/clock.js';
import { CairnError, describeError } from '../core/errors.js';
import { redactSecrets } from '../core/secrets.js';
import { DEFAULT_INPUT_CAP, readSmallFile } from '../io/read.js';
import { deliberationWithText, injectedPatternIds, latestDeliberation, patternExists, patternTexts, roleIdsByPrefix } from './queries.js';
import { roleLookups, type RoleLookups } from './index/index.js';
import { findingText, linkFinding, type FindingLink, type LinkContext } from './link.js';
import { linkByEmbedding } from './embeddings.js';
import { appendEvents, patternDb } from '../events/log.js';

// store-deliberation (SPEC §3.3, §3.9): the artifact, its record, its patterns, each finding's links.

export interface DeliberationInput {
  text: string;
  role: string;
  issue: string | null;
  run: string | null;
  phase: string | null;
  iteration: number | null;
  labels: string[];
  files: string[];
}

export interface ObservedPattern {
  id: string;
  text: string;
  category: string;
  source: Extracted['source'];
  status: 'new' | 'seen' | 'merged' | 'echo';
}

export interface StoredDeliberation {
  deliberation: string;
  evidence: EvidenceLevel;
  verdict: Verdict | null;
  problems: string[];
  patterns: ObservedPattern[];
  links: FindingLink[];
  /** A repeat (SPEC §3.9.4): nothing recorded. */
  alreadyStored: boolean;
}

function capList(values: string[], count: number, chars: number): string[] {
  return values.slice(0, count).map((v) => v.slice(0, chars));
}

export function digestVerdict(v: Verdict | null): VerdictDigest | null {
  if (!v) return null;
  // event lines stay small (SPEC §3.2): the full verdict is in the artifact
  const cap = (ids: string[]) => capList(ids, 20, 16);
  return {
    verdict: v.verdict,
    effective: v.effective,
    must_fix: cap(v.must_fix),
    false_positives: cap(v.false_positives),
    findings: cap(v.issues.map((f) => f.id)),
  };
}

interface Known {
  id: string;
  text: string;
  key: RuleKey;
}

/** An echo, else the exact pattern, else a near-duplicate (docs/internals.md, "Identity"), else new. */
class Resolver {
  private readonly exists;
  /** Not indexed yet, but near-duplicates of its later texts. */
  private readonly created: CreatedPatterns;
  private readonly seen = new Set<string>();
  private readonly keys = new Map<string, RuleKey>();
  readonly observed: ObservedPattern[] = [];

  constructor(
    private readonly store: Store,
    private readonly lookups: RoleLookups,
    private readonly injected: Known[],
    texts: string[],
  ) {
    this.exists = patternExists(patternDb(store), store.project);
    this.created = new CreatedPatterns(texts);
  }

  resolve(e: Extracted): string {
    // stops before it records anything (SPEC §2)
    this.store.deadline.check("matching the deliberation's texts to patterns");
    const key = ruleKey(e.text);
    const echoOf = bestMatch(key, this.injected);
    let id: string;
    let status: ObservedPattern['status'];
    if (echoOf) {
      id = echoOf.id;
      status = 'echo';
    } else {
      id = patternId(this.store.project, this.lookups.role, e.text);
      if (this.exists(id)) status = 'seen';
      else {
        const near = bestMatch(key, [...this.indexed(e.text), ...this.created.candidates(key)]);
        if (near) {
          id = near.id;
          status = 'merged';
        } else status = 'new';
      }
    }
    if (this.seen.has(id)) return id;
    this.seen.add(id);
    if (status === 'new') this.created.add({ id, text: e.text, key });
    this.observed.push({ id, text: e.text, category: e.category, source: e.source, status });
    return id;
  }

  private indexed(text: string): Known[] {
    return this.lookups.nearDuplicates(text, NEAR_DUPLICATE).map((r) => {
      let key = this.keys.get(r.id);
      if (!key) this.keys.set(r.id, (key = ruleKey(r.text)));
      return { ...r, key };
    });
  }
}

/** Prefix filtering (index/README.md), rarest first among the deliberation's texts, counted once. */
class CreatedPatterns {
  private readonly holding = new Map<string, number>();
  private readonly byTerm = new Map<string, Known[]>();

  constructor(texts: string[]) {
    for (const text of texts) for (const term of ruleKey(text).terms) this.holding.set(term, (this.holding.get(term) ?? 0) + 1);
  }

  add(k: Known): void {
    for (const term of this.prefix(k.key.terms)) {
      const list = this.byTerm.get(term);
      if (list) list.push(k);
      else this.byTerm.set(term, [k]);
    }
  }

  candidates(key: RuleKey): Known[] {
    return [...new Set(this.prefix(key.terms).flatMap((term) => this.byTerm.get(term) ?? []))];
  }

  private prefix(terms: Set<string>): string[] {
    const frequency = (term: string) => this.holding.get(term) ?? 0;
    const ordered = [...terms].sort((a, b) => frequency(a) - frequency(b) || (a < b ? -1 : a > b ? 1 : 0));
    return ordered.slice(0, terms.size - Math.ceil(NEAR_DUPLICATE * terms.size - 1e-9) + 1);
  }
}

/** Ties to the lower id. */
function bestMatch(key: RuleKey, pool: Known[]): Known | undefined {
  let best: Known | undefined;
  let bestScore = NEAR_DUPLICATE;
  for (const k of pool) {
    // Jaccard ≥ 0.8 needs the smaller set to be at least 0.8 of the larger
    const [small, large] = k.key.terms.size < key.terms.size ? [k.key.terms.size, key.terms.size] : [key.terms.size, k.key.terms.size];
    if (small < large * NEAR_DUPLICATE) continue;
    const j = similarity(key, k.key);
    if (j >= bestScore && (!best || j > bestScore || k.id < best.id)) {
      best = k;
      bestScore = j;
    }
  }
  return best;
}

/** Their return is an echo, not a sighting. */
function injectedInto(store: Store, role: string, issue: string | null, run: string | null): Known[] {
  if (issue === null && run === null) return [];
  const ids = injectedPatternIds(patternDb(store), store.project, issue ?? '', run ?? '', role);
  return patternTexts(patternDb(store), store.project, ids).map((row) => ({ ...row, key: ruleKey(row.text) }));
}

/** SPEC §3.9.1 */
export function linkContext(store: Store, lookups: RoleLookups, first: { id: string; text: string }[]): LinkContext {
  return {
    role: lookups.role,
    first,
    byPrefix: (prefix) => roleIdsByPrefix(patternDb(store), store.project, lookups.role, prefix),
    others: (text) => lookups.sharing(text, LINK_CANDIDATES),
    weight: lookups.weights(first.map((c) => c.text)),
  };
}

const LINK_CANDIDATES = 20;

/** Writers refuse what the reducer would skip on replay (SPEC §3.2). */
export function checkScope(fields: Record<string, string | null>, limits: Record<string, number>): void {
  for (const [name, value] of Object.entries(fields)) {
    if (value !== null && value.length > limits[name]) throw new CairnError('usage', `--${name} is longer than ${limits[name]} characters`);
  }
}

export function storeDeliberation(store: Store, given: DeliberationInput): StoredDeliberation {
  if (!given.text.trim()) throw new CairnError('input', 'the deliberation is empty');
  // redacted before anything reads it (SPEC §4.6)
  const input = { ...given, text: redactSecrets(given.text).text };
  const role = input.role.toLowerCase();
  checkScope(
    { role, issue: input.issue, run: input.run, phase: input.phase },
    { role: MAX_ROLE_CHARS, issue: MAX_SCOPE_CHARS, run: MAX_SCOPE_CHARS, phase: MAX_SCOPE_CHARS },
  );
  const parsed = parseVerdict(input.text);
  const evidence = evidenceLevel(input.text, input.files);
  const hash = sha256(input.text);
  const scoped = input.issue !== null || input.run !== null;
  const scope = { issue: input.issue, run: input.run };
  const base = { evidence, verdict: parsed.verdict, problems: parsed.problems };
  // a retry is not evidence (SPEC §3.9.4)
  const earlier = scoped ? sameDeliberation(store, role, input.issue, input.run, hash) : undefined;
  if (earlier) return { deliberation: earlier, ...base, patterns: [], links: [], alreadyStored: true };

  const { items, findings } = extractPatterns(input.text, parsed.verdict);
  const injected = injectedInto(store, role, input.issue, input.run);
  const lookups = roleLookups(patternDb(store), store.project, role);
  const resolver = new Resolver(
    store,
    lookups,
    injected,
    items.map((e) => e.text),
  );
  const own = items.map((e) => ({ id: resolver.resolve(e), text: e.text }));
  const tierOne = [...own, ...injected.map(({ id, text }) => ({ id, text }))];
  const ctx = linkContext(store, lookups, tierOne);
  const found = new Map<string, ReturnType<typeof linkFinding>>();
  for (const f of findings) {
    store.deadline.check('linking the findings to patterns');
    found.set(f.finding, linkFinding(f.detail, ctx));
  }
  const unlinked = findings.filter((f) => !found.get(f.finding));
  const byMeaning = linkByEmbedding(
    store,
    unlinked.map((f) => ({ id: f.finding, text: findingText(f.detail) })),
    tierOne,
  );
  const links: FindingLink[] = [];
  for (const f of findings) {
    const summary = f.text.slice(0, MAX_FINDING_SUMMARY_CHARS);
    const link = found.get(f.finding);
    const similar = byMeaning.get(f.finding);
    if (link) links.push({ finding: f.finding, summary, ...link });
    else if (similar) links.push({ finding: f.finding, summary, patterns: [similar], match: 'embedding' });
    // a finding applying no known pattern states its own rule (SPEC §3.9.1)
    else if (f.storable) links.push({ finding: f.finding, summary, patterns: [resolver.resolve(f)], match: 'self' });
  }

  const deliberation = 'd' + nextUlid(nowMs()).toLowerCase();
  const path = store.artifactPath('deliberations', `${deliberation}.md`);
  writeFileAtomic(path, input.text, store.dir);
  const context = { phase: input.phase, labels: capList(input.labels, 10, 60), files: capList(input.files, 10, 160) };
  const payloads: EventPayload[] = [
    {
      type: 'deliberation.stored',
      deliberation,
      role,
      ...scope,
      phase: input.phase,
      iteration: input.iteration,
      labels: context.labels,
      files: context.files,
      verdict: digestVerdict(parsed.verdict),
      evidence,
      hash,
      size: Buffer.byteLength(input.text),
      path: `artifacts/deliberations/${deliberation}.md`,
    },
    ...resolver.observed.map(
      (p): EventPayload => ({
        type: 'pattern.observed',
        pattern: p.id,
        role,
        text: p.text,
        category: p.category as Extracted['category'],
        ...scope,
        ...context,
        deliberation,
        ...(p.status === 'echo' ? { echo: true as const } : {}),
      }),
    ),
    ...links.map(
      (l): EventPayload => ({
        type: 'finding.linked',
        deliberation,
        role,
        ...scope,
        finding: l.finding,
        summary: l.summary,
        patterns: l.patterns,
        match: l.match,
      }),
    ),
  ];
  try {
    appendEvents(store, payloads);
  } catch (err) {
    rmSync(path, { force: true }); // no orphan artifact
    throw err;
  }
  try {
    lookups.packWhatWasRead();
  } catch (err) {
    store.log.warn(`recorded; the term index's long lists were not packed (${describeError(err)})`);
  }
  // another process stored the same text first: ours changes nothing
  const first = scoped ? sameDeliberation(store, role, input.issue, input.run, hash) : deliberation;
  if (first !== deliberation) {
    rmSync(path, { force: true });
    return { deliberation: first!, ...base, patterns: [], links: [], alreadyStored: true };
  }
  return { deliberation, ...base, patterns: resolver.observed, links, alreadyStored: false };
}

function sameDeliberation(store: Store, role: string, issue: string | null, run: string | null, hash: string): string | undefined {
  return deliberationWithText(patternDb(store), store.project, role, issue ?? '', run ?? '', hash);
}

/** A repeat is not a new one. */
export function latestDeliberationText(
  store: Store,
  role: string,
  issue: string | null,
  run: string | null,
): { id: string; text: string; files: string[] } | undefined {
  const row = latestDeliberation(patternDb(store), store.project, role, issue ?? '', run ?? '');
  if (!row) return undefined;
  // the log comes through git: its path field is not trusted
  if (!/^d[0-9a-z]{26}$/.test(row.id))
    throw new CairnError('input', `the stored ${role} deliberation has a malformed id ${JSON.stringify(row.id.slice(0, 40))}`);
  const path = store.artifactPath('deliberations', `${row.id}.md`);
  try {
    // bounded (SPEC §2): a regular file, never a device or FIFO
    const bytes = readSmallFile(path, DEFAULT_INPUT_CAP);
    if (!bytes) throw new CairnError('store', `the stored ${role} deliberation ${row.id} is unreadable (ENOENT)`);
    return { id: row.id, text: bytes.toString('utf8'), files: row.files };
  } catch (err) {
    if (err instanceof CairnError) throw err;
    throw new CairnError(
      'store',
      `the stored ${role} deliberation ${row.id} is unreadable ` + `(${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}
