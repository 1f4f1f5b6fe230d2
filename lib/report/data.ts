import { nowMs } from '../core/clock.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';
import { logEvents } from '../events/history.js';
import { patternDb } from '../events/log.js';
import type { CairnEvent } from '../events/types.js';
import { readAudit, type AuditDigest } from '../knowledge/sanitize.js';
import { knowledgeDb, knowledgeStats, recentKnowledge } from '../knowledge/index.js';
import type { KnowledgeHit, KnowledgeStats } from '../knowledge/index.js';
import { compareRecent } from '../landing/search.js';
import { projectLandings } from '../landing/library.js';
import type { LandingPattern } from '../landing/library.js';
import { trackRecord } from '../patterns/block.js';
import { formatPatterns } from '../patterns/format.js';
import { lifecycleCounts, patternsByIds, rankPatterns, storedRoles, type Pattern } from '../patterns/queries.js';
import { scorePattern } from '../patterns/scoring.js';
import type { Store } from '../store/store.js';

// What `cairn report` shows, gathered from the store: the event log read once, in one pass that keeps
// counts rather than events (lib/events/history.ts reads it), and the indexes for the rest.

/** One run (issue/run) in which a role was given a block: how many of its lines validators dismissed or kept. */
export interface RunPoint {
  scope: string;
  ts: string;
  injected: number;
  dismissed: number;
  kept: number;
}

export type LeftReason = 'deprecated' | 'obsolete' | 'dismissed' | 'decayed' | 'outranked';
const REASONS: LeftReason[] = ['deprecated', 'obsolete', 'dismissed', 'decayed', 'outranked'];
const NO_REASONS = () => Object.fromEntries(REASONS.map((r) => [r, 0])) as Record<LeftReason, number>;

export interface LeftPattern {
  pattern: Pattern;
  reason: LeftReason;
  detail: string;
  lastInjected: string;
}

export interface RoleReport {
  role: string;
  /** The block the role gets now (no context: its all-time best), as format-patterns prints it. */
  block: string;
  runs: RunPoint[];
  /** Patterns given to the role in some run that its block no longer holds, the most recently given first. */
  left: LeftPattern[];
  leftTotal: number;
  leftByReason: Record<LeftReason, number>;
}

export interface TopPattern {
  pattern: Pattern;
  score: number;
  record: string;
  /** Net tested evidence after each piece, oldest first: confirmed +1, dismissed − its weight, outcomes ± theirs. */
  evidence: number[];
}

export interface ReportData {
  project: string;
  generatedAt: string;
  events: number;
  patternsByState: Record<string, number>;
  roles: RoleReport[];
  top: TopPattern[];
  knowledge: { stats: KnowledgeStats; newest: KnowledgeHit[]; audit: AuditDigest };
  landings: LandingPattern[];
}

const TOP = 10;
const LEFT_SHOWN = 12;
const NEWEST = 12;
const LANDINGS = 20;
/** A pattern whose time decay has fallen under this has decayed out of the block (half its score gone). */
const DECAYED = 0.5;

const scopeKey = (e: { issue?: string | null; run?: string | null }) => `${e.issue ?? ''}/${e.run ?? ''}`;

export function gatherReport(store: Store, progress: Progress = NO_PROGRESS): ReportData {
  const now = nowMs();
  const db = patternDb(store);
  const project = store.project;
  const adversarial = store.config.roles.adversarial;
  const known = new Set(storedRoles(db, project));

  // the blocks first: which patterns each role holds now, and the top patterns, whose evidence the pass collects
  const blocks = new Map(
    adversarial.map((role) => {
      const none = { issue: null, run: null, labels: [], files: [], phase: null };
      const r = formatPatterns(store, { role, ...none, exactTokens: false });
      return [role, { block: r.block, ids: new Set(r.patterns.map((p) => p.id)) }];
    }),
  );
  const ranked = (role: string) => {
    const ctx = { now, role, prior: store.config.prior };
    return rankPatterns(db, project, { roles: [role], ctx, limit: TOP });
  };
  const top = [...known]
    .flatMap(ranked)
    .sort((a, b) => b.score - a.score || (a.pattern.id < b.pattern.id ? -1 : 1))
    .slice(0, TOP);
  const evidence = new Map(top.map((t) => [t.pattern.id, [0]]));

  // one pass over the log
  type Run = { ts: string; injected: Set<string> };
  const runs = new Map<string, Map<string, Run>>(adversarial.map((r) => [r, new Map()]));
  const lastInjected = new Map<string, Map<string, string>>(adversarial.map((r) => [r, new Map()]));
  const dismissed = new Map<string, Set<string>>();
  const kept = new Map<string, Set<string>>();
  const mark = (m: Map<string, Set<string>>, e: CairnEvent, id: string) => {
    const key = scopeKey(e as { issue?: string | null; run?: string | null });
    let s = m.get(key);
    if (!s) m.set(key, (s = new Set()));
    s.add(id);
  };
  const step = (id: string, delta: number) => {
    const series = evidence.get(id);
    if (series) series.push(series[series.length - 1] + delta);
  };
  let events = 0;
  for (const e of logEvents(store.eventsPath, (m) => store.log.warn(m), progress)) {
    if (e.project !== project) continue;
    events++;
    switch (e.type) {
      case 'pattern.injected': {
        const byRun = runs.get(e.role);
        if (!byRun) break;
        const key = scopeKey(e);
        let run = byRun.get(key);
        if (!run) byRun.set(key, (run = { ts: e.ts, injected: new Set() }));
        if (e.ts < run.ts) run.ts = e.ts;
        const last = lastInjected.get(e.role)!;
        for (const id of e.patterns) {
          run.injected.add(id);
          if ((last.get(id) ?? '') < e.ts) last.set(id, e.ts);
        }
        break;
      }
      case 'pattern.ignored':
        mark(dismissed, e, e.pattern);
        step(e.pattern, -e.weight);
        break;
      case 'pattern.reinforced':
        mark(kept, e, e.pattern);
        step(e.pattern, 1);
        break;
      case 'pattern.outcome':
        for (const g of e.patterns) step(g.pattern, e.result === 'pass' ? g.weight : -g.weight);
        break;
    }
  }

  const roles: RoleReport[] = [];
  for (const role of adversarial) {
    const byRun = runs.get(role)!;
    if (byRun.size === 0 && !known.has(role)) continue; // a role this project does not have
    const points = [...byRun].map(([scope, r]) => {
      const count = (m: Map<string, Set<string>>) => [...r.injected].filter((id) => m.get(scope)?.has(id)).length;
      return { scope, ts: r.ts, injected: r.injected.size, dismissed: count(dismissed), kept: count(kept) };
    });
    points.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.scope < b.scope ? -1 : 1));
    const inBlock = blocks.get(role)!;
    const given = [...lastInjected.get(role)!].filter(([id]) => !inBlock.ids.has(id));
    const leftByReason = NO_REASONS();
    const when = new Map(given);
    const left: LeftPattern[] = [];
    for (const p of patternsByIds(
      db,
      project,
      given.map(([id]) => id),
    )) {
      const why = leftReason(p, now, store);
      leftByReason[why.reason]++;
      left.push({ pattern: p, ...why, lastInjected: when.get(p.id)! });
    }
    // the most recently given first (ties by id)
    left.sort((a, b) => b.lastInjected.localeCompare(a.lastInjected) || a.pattern.id.localeCompare(b.pattern.id));
    const shown = left.slice(0, LEFT_SHOWN);
    roles.push({ role, block: inBlock.block, runs: points, left: shown, leftTotal: left.length, leftByReason });
  }

  const kdb = knowledgeDb(store, ['log', 'archive']);
  return {
    project,
    generatedAt: new Date(now).toISOString(),
    events,
    patternsByState: lifecycleCounts(db, project),
    roles,
    top: top.map((t) => ({ ...t, record: trackRecord(t), evidence: evidence.get(t.pattern.id)! })),
    knowledge: {
      stats: knowledgeStats(kdb, project),
      newest: recentKnowledge(kdb, { project, sources: ['log'], limit: NEWEST }),
      audit: readAudit(store),
    },
    landings: landingList(store),
  };
}

/** Why a pattern given to a role before is not in its block now. */
function leftReason(p: Pattern, now: number, store: Store): { reason: LeftReason; detail: string } {
  if (p.lifecycle === 'deprecated') return { reason: 'deprecated', detail: p.reason ?? 'deprecated' };
  const net = Math.round(p.success_count - p.ignore_count);
  if (p.regressed) return { reason: 'obsolete', detail: `validated, then dismissed (${p.ignore_count}× in all)` };
  if (p.ignore_count > 0) return { reason: 'dismissed', detail: `dismissed ${p.ignore_count}× (${net} net)` };
  const f = scorePattern(p, { now, role: p.role, prior: store.config.prior });
  if (f.decay < DECAYED) {
    return { reason: 'decayed', detail: `unused for ${Math.floor(f.days)} days (decay ${f.decay.toFixed(2)})` };
  }
  return { reason: 'outranked', detail: `score ${f.base.toFixed(2)}: others rank above it within the budget` };
}

/** This project's landing patterns, the newest first; none when the library does not read (cairn doctor says why). */
function landingList(store: Store): LandingPattern[] {
  try {
    return [...projectLandings(store.dir, store.project)].sort(compareRecent).slice(0, LANDINGS);
  } catch {
    return [];
  }
}
