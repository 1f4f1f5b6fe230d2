import { rmSync } from 'node:fs';
import { writeFileAtomic } from '../io/atomic.js';
import type { Store } from '../store/store.js';
import type { EventPayload, VerdictDigest } from '../events/types.js';
import { parseVerdict, type Verdict } from './verdict.js';
import { evidenceLevel, type EvidenceLevel } from './evidence.js';
import { extractPatterns, type Extracted } from './extract.js';
import { jaccard, sha256, tokenSet, words } from '../core/text.js';
import { nextUlid, patternId } from '../core/ids.js';
import { nowMs } from '../core/clock.js';
import { CairnError } from '../core/errors.js';
import { injectedPatternIds } from './queries.js';
import { appendEvents, patternDb } from '../events/log.js';

// store-deliberation (SPEC §3.3): keep the text as an artifact, record it, and observe its patterns.

export const NEAR_DUPLICATE = 0.8;

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
}

/** At most `count` values of at most `chars` characters: what an event line can carry (well under 4 KiB). */
function capList(values: string[], count: number, chars: number): string[] {
  return values.slice(0, count).map((v) => v.slice(0, chars));
}

export function digestVerdict(v: Verdict | null): VerdictDigest | null {
  if (!v) return null;
  // Event lines stay small (SPEC §3.2): the full verdict is in the artifact.
  const cap = (ids: string[]) => capList(ids, 20, 16);
  return { verdict: v.verdict, effective: v.effective, must_fix: cap(v.must_fix), false_positives: cap(v.false_positives), findings: cap(v.issues.map((f) => f.id)) };
}

interface Known {
  id: string;
  text: string;
  tokens: Set<string>;
}

/** Resolve each extracted text to a pattern id: exact, else a near-duplicate of the same role, else new. */
function resolve(store: Store, role: string, extracted: Extracted[], injected: Known[]): ObservedPattern[] {
  const db = patternDb(store);
  const project = store.project;
  const exists = db.prepare('SELECT 1 FROM patterns WHERE project = ? AND id = ?');
  const sizes = extracted.map((e) => new Set(words(e.text)).size).filter((n) => n > 0);
  let pool: Known[] = [];
  if (sizes.length) {
    // Jaccard ≥ 0.8 needs the two token-set sizes within a factor of 0.8 of each other.
    const lo = Math.ceil(Math.min(...sizes) * NEAR_DUPLICATE);
    const hi = Math.floor(Math.max(...sizes) / NEAR_DUPLICATE);
    const rows = db
      .prepare('SELECT id, text FROM patterns WHERE project = ? AND role = ? AND ntok BETWEEN ? AND ? ORDER BY id')
      .all(project, role, lo, hi) as { id: string; text: string }[];
    pool = rows.map((r) => ({ ...r, tokens: tokenSet(r.text) }));
  }
  const seen = new Set<string>();
  const out: ObservedPattern[] = [];
  for (const e of extracted) {
    const tokens = tokenSet(e.text);
    const echoOf = bestMatch(tokens, injected);
    let id: string;
    let status: ObservedPattern['status'];
    if (echoOf) {
      id = echoOf.id;
      status = 'echo';
    } else {
      id = patternId(project, role, e.text);
      if (exists.get(project, id)) status = 'seen';
      else {
        const near = bestMatch(tokens, pool);
        if (near) {
          id = near.id;
          status = 'merged';
        } else status = 'new';
      }
    }
    if (seen.has(id)) continue; // two texts of one deliberation landing on one pattern count once
    seen.add(id);
    if (status === 'new') pool.push({ id, text: e.text, tokens });
    out.push({ id, text: e.text, category: e.category, source: e.source, status });
  }
  return out;
}

function bestMatch(tokens: Set<string>, pool: Known[]): Known | undefined {
  let best: Known | undefined;
  let bestScore = NEAR_DUPLICATE;
  for (const k of pool) {
    // Jaccard ≥ 0.8 needs the smaller set to be at least 0.8 of the larger: skip the rest unseen.
    const [small, large] = k.tokens.size < tokens.size ? [k.tokens.size, tokens.size] : [tokens.size, k.tokens.size];
    if (small < large * NEAR_DUPLICATE) continue;
    const j = jaccard(tokens, k.tokens);
    if (j >= bestScore && (!best || j > bestScore || k.id < best.id)) {
      best = k;
      bestScore = j;
    }
  }
  return best;
}

/** The patterns injected into this role for this issue/run: their return is an echo, not a sighting. */
function injectedInto(store: Store, role: string, issue: string | null, run: string | null): Known[] {
  if (issue === null && run === null) return [];
  const ids = injectedPatternIds(patternDb(store), store.project, issue ?? '', run ?? '', role);
  if (ids.length === 0) return [];
  const get = patternDb(store).prepare('SELECT id, text FROM patterns WHERE project = ? AND id = ?');
  return ids.flatMap((id) => {
    const row = get.get(store.project, id) as { id: string; text: string } | undefined;
    return row ? [{ ...row, tokens: tokenSet(row.text) }] : [];
  });
}

export function storeDeliberation(store: Store, input: DeliberationInput): StoredDeliberation {
  if (!input.text.trim()) throw new CairnError('input', 'the deliberation is empty');
  const role = input.role.toLowerCase();
  const parsed = parseVerdict(input.text);
  const evidence = evidenceLevel(input.text, input.files);
  const extracted = extractPatterns(input.text, parsed.verdict);
  const observed = resolve(store, role, extracted, injectedInto(store, role, input.issue, input.run));

  const deliberation = 'd' + nextUlid(nowMs()).toLowerCase();
  const path = store.artifactPath('deliberations', `${deliberation}.md`);
  writeFileAtomic(path, input.text, store.dir);

  const scope = { issue: input.issue, run: input.run };
  const context = { phase: input.phase, labels: capList(input.labels, 10, 60), files: capList(input.files, 10, 160) };
  const payloads: EventPayload[] = [
    {
      type: 'deliberation.stored', deliberation, role, ...scope, phase: input.phase, iteration: input.iteration,
      labels: context.labels, files: context.files, verdict: digestVerdict(parsed.verdict), evidence,
      hash: sha256(input.text), size: Buffer.byteLength(input.text), path: `artifacts/deliberations/${deliberation}.md`,
    },
    ...observed.map((p): EventPayload => ({
      type: 'pattern.observed', pattern: p.id, role, text: p.text, category: p.category as Extracted['category'],
      ...scope, ...context, deliberation, ...(p.status === 'echo' ? { echo: true as const } : {}),
    })),
  ];
  try {
    appendEvents(store, payloads);
  } catch (err) {
    rmSync(path, { force: true }); // not recorded, so not kept: no orphan artifact
    throw err;
  }
  return { deliberation, evidence, verdict: parsed.verdict, problems: parsed.problems, patterns: observed };
}
