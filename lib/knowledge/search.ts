import { queryTerms } from '../store/fts.js';
import type { Database } from '../store/db.js';
import { searchKnowledge, TermCounts, type KnowledgeHit, type KnowledgeQuery } from './index.js';
import { branchWords, type SessionContext } from './context.js';

// Query terms (SPEC §4.3, §4.4): each topic searched alone, fused by reciprocal rank, so long generic entries do not win.

/** Shorter words carry no topic ("to", "8") unless they mix letters and digits ("v4"). */
const MIN_WORD = 3;
/** A longer topic keeps its most distinctive. */
const MAX_TOPIC_TERMS = 12;
const MAX_BEAD_TOPICS = 8;
/** Cormack et al. 2009 */
const RRF_K = 60;
/** The prompt is what the person asks now: counted twice. */
const PROMPT_WEIGHT = 2;

// a compound identifier (kb_search, auto-recall) is a phrase of its words; anchored at a word's start: no rescans
const COMPOUND = /(?<![\p{L}\p{N}])[\p{L}\p{N}]+(?:[_.-][\p{L}\p{N}]+)+/gu;

/** Compound identifiers as phrases, then content words. */
export function recallTerms(text: string): string[] {
  const terms: string[] = [];
  let rest = '';
  let at = 0;
  for (const m of text.normalize('NFKC').matchAll(COMPOUND)) {
    terms.push(m[0].toLowerCase().replace(/[_.-]+/g, ' '));
    rest += text.slice(at, m.index) + ' ';
    at = m.index! + m[0].length;
  }
  rest += text.slice(at);
  const words = queryTerms(rest).filter((w) => w.length >= MIN_WORD || (/\d/.test(w) && /\p{L}/u.test(w)));
  return [...new Set([...terms, ...words])];
}

/** No-match terms dropped, then the rarest first, then list order. */
function distinctiveTerms(counts: TermCounts, candidates: string[], max: number): string[] {
  const terms = [...new Set(candidates)];
  if (terms.length <= max) return terms;
  const counted = terms.map((term, i) => ({ term, i, n: counts.rows(term) }));
  return counted
    .filter((c) => c.n > 0)
    .sort((a, b) => a.n - b.n || a.i - b.i)
    .slice(0, max)
    .sort((a, b) => a.i - b.i)
    .map((c) => c.term);
}

export interface Topic {
  text: string;
  weight: number;
}

export function contextTopics(c: SessionContext): Topic[] {
  const topics: Topic[] = [];
  if (c.prompt?.trim()) topics.push({ text: c.prompt, weight: PROMPT_WEIGHT });
  for (const title of c.beadTitles.slice(0, MAX_BEAD_TOPICS)) topics.push({ text: title, weight: 1 });
  const work = [...branchWords(c.branch ?? ''), ...c.changedFiles].join(' ');
  if (work.trim()) topics.push({ text: work, weight: 1 });
  return topics;
}

export interface TopicRanking {
  hits: KnowledgeHit[];
  terms: string[];
}

export function searchTopic(db: Database, q: Omit<KnowledgeQuery, 'limit'>, text: string, limit: number, counts: TermCounts): TopicRanking {
  const terms = distinctiveTerms(counts, recallTerms(text), MAX_TOPIC_TERMS);
  return { hits: searchKnowledge(db, { ...q, terms, limit }, counts), terms };
}

/** Ties broken by topic order; with the terms searched. */
export function fuseTopics(rankings: (TopicRanking & { weight: number })[], limit: number): { hits: KnowledgeHit[]; terms: string[] } {
  const fused = new Map<number, { hit: KnowledgeHit; score: number }>();
  for (const { hits, weight } of rankings) {
    hits.forEach((hit, rank) => {
      const f = fused.get(hit.id) ?? { hit, score: 0 };
      f.score += weight / (RRF_K + rank + 1);
      fused.set(hit.id, f);
    });
  }
  const hits = [...fused.values()].sort((a, b) => b.score - a.score || b.hit.score - a.hit.score || b.hit.ts - a.hit.ts).map((f) => f.hit);
  return { hits: hits.slice(0, limit), terms: [...new Set(rankings.flatMap((r) => r.terms))] };
}

export function searchTopics(
  db: Database,
  q: Omit<KnowledgeQuery, 'limit'>,
  topics: Topic[],
  limit: number,
): { hits: KnowledgeHit[]; terms: string[] } {
  const counts = new TermCounts(db, q.newest); // topics share words: each counted once
  return fuseTopics(
    topics.map((t) => ({ ...searchTopic(db, q, t.text, limit, counts), weight: t.weight })),
    limit,
  );
}
