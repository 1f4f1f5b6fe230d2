import { nowMs } from '../core/clock.js';
import { CairnError } from '../core/errors.js';
import type { Store } from '../store/store.js';
import { sameKindRoles } from '../store/config.js';
import { patternDb } from '../events/log.js';
import type { PatternHistory } from '../events/history.js';
import { knowledgeDb, searchKnowledge } from '../knowledge/index.js';
import { recallTerms } from '../knowledge/search.js';
import { fitEntries, frameChars, healthLine, MAX_CHARS, renderBlock } from '../knowledge/auto-recall.js';
import { captureComments } from '../knowledge/capture.js';
import { scheduleSanitize } from '../knowledge/schedule.js';
import { clip } from '../knowledge/render.js';
import type { KnowledgeType } from '../knowledge/entry.js';
import { formatPatterns } from '../patterns/format.js';
import { embeddingRelevanceFor } from '../patterns/relevance.js';
import { warnUnknownRoles } from '../patterns/roles.js';
import { evidenceLedger, resolvePattern } from '../patterns/queries.js';
import { agedLedger } from '../events/credit.js';
import { scorePattern } from '../patterns/scoring.js';
import { explainLines } from '../patterns/explain.js';
import { landingPatternLines } from '../landing/search.js';

// The tools of `cairn mcp`: each the library path of a command, returning the text the agent reads.

/** The newest; the rest are counted. */
const EXPLAIN_EVENTS = 40;

const quoted = (text: string) => `'${clip(text.replace(/\s+/g, ' ').trim(), 80)}'`;

/** Fenced as auto-recall renders its block. */
export function recall(store: Store, args: { query: string; type?: KnowledgeType; limit?: number }): string {
  const terms = recallTerms(args.query);
  if (terms.length === 0) {
    return `Nothing to search for in ${quoted(args.query)}: only short or common words. Name files or commands.`;
  }
  const q = { project: store.project, sources: ['log' as const], type: args.type, withSuperseded: false };
  const hits = searchKnowledge(knowledgeDb(store, q.sources), { ...q, terms, limit: args.limit ?? 10 });
  if (hits.length === 0) {
    return `No knowledge entry matches ${quoted(args.query)}${args.type ? ` (type ${args.type})` : ''}.`;
  }
  const health = healthLine(store.dir, nowMs());
  // no token budget: the agent asked; the character cap keeps the answer within the hosts' limits
  const chosen = fitEntries(hits, () => 0, Infinity, MAX_CHARS - frameChars({ health, patterns: [] }));
  return renderBlock({ health, lines: chosen.map((c) => c.line), patterns: [] });
}

/** As `memory-capture --bead B --text "TYPE: content"`: the same entry and log line. */
export function remember(store: Store, args: { type: KnowledgeType; content: string; bead?: string }): string {
  const text = `${args.type.toUpperCase()}: ${args.content}`;
  const comment = { bead: args.bead ?? '', text, ts: Math.floor(nowMs() / 1000), source: 'cli' };
  const { appended } = captureComments(store, [comment]);
  const kept = appended[0];
  if (!kept) return 'Nothing was stored: no text is left once control characters and injection markers are removed.';
  if (kept.status === 'duplicate') return `Already known as ${kept.entry.key}; nothing added.`;
  scheduleSanitize(store);
  const { key, type, bead, content } = kept.entry;
  return `Stored as ${key} [${type.toUpperCase()}]${bead ? ` (bead ${bead})` : ''}: ${content}`;
}

/** format-patterns' block with --ids (and landing lines with a query), recording nothing. */
export interface PatternsArgs {
  role: string;
  query?: string;
  files?: string[];
  labels?: string[];
}

export function patterns(store: Store, args: PatternsArgs): string {
  const role = args.role.toLowerCase();
  warnUnknownRoles(store, role);
  const query = args.query?.trim() || undefined;
  const roles = sameKindRoles(store.config, role);
  const relevance = query === undefined ? undefined : embeddingRelevanceFor(store, query, roles);
  const context = { issue: null, run: null, labels: args.labels ?? [], files: args.files ?? [], phase: null };
  const result = formatPatterns(store, { role, ...context, query, relevance, exactTokens: false, ids: true });
  const landing = query === undefined ? [] : landingPatternLines(store.dir, store.project, query);
  if (!result.block && landing.length === 0) {
    return `No pattern of role ${quoted(role)} or its kind scores above the cut yet (they come from deliberations).`;
  }
  return [result.block, ...landing].filter(Boolean).join('\n');
}

/** By id, short id (`[p3f2a1c]` too) or exact text. */
export function explain(store: Store, history: PatternHistory, args: { pattern: string }): string {
  const ref = args.pattern.trim().replace(/^\[(p[0-9a-f]+)\]$/, '$1');
  if (!ref) throw new CairnError('usage', 'name a pattern: its id, the short id from the block, or its text');
  const p = resolvePattern(patternDb(store), store.project, ref);
  const factors = scorePattern(p, { now: nowMs(), role: p.role, prior: store.config.prior });
  const events = history.events(store.project, p.id, (m) => store.log.warn(m), store.deadline);
  const evidence = {
    ledger: agedLedger(evidenceLedger(patternDb(store), store.project, p.id)),
    halfLife: store.config.evidence.halfLife,
  };
  return explainLines(p, factors, p.role, events, evidence, EXPLAIN_EVENTS).join('\n');
}

export function landings(store: Store, args: { query: string; limit?: number }): string {
  const lines = landingPatternLines(store.dir, store.project, args.query, args.limit ?? 5);
  if (lines.length === 0) {
    return `No landing pattern matches ${quoted(args.query)} (they are kept from past successful landings).`;
  }
  const title = 'How similar work was landed in this project (from .cairn/landing-patterns.json), best match first:';
  return [title, ...lines].join('\n');
}
