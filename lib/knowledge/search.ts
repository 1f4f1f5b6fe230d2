import { queryTerms } from '../store/fts.js';
import type { Database } from '../store/db.js';
import { searchKnowledge, TermCounts, type KnowledgeHit, type KnowledgeQuery } from './index.js';
import { branchWords, type SessionContext } from './context.js';

// Query terms for knowledge search (SPEC §4.3, §4.4): the content words of a text, without stop-words
// and short words. A session's context is several topics at once — the prompt, each bead in progress
// or open, the branch and the files changed — so each is searched on its own and the rankings are
// fused (reciprocal rank fusion): every thread of work gets its best entries in, and an entry that
// several topics find rises. One query of all the words together would let long entries that touch
// many generic words win over the entries any one topic is about.

/** Words shorter than this carry no topic ("to", "8", "0"), unless they mix letters and digits ("v4", "e2"). */
const MIN_WORD = 3;
/** Terms of one topic at most; a longer one (a long prompt) keeps its most distinctive. */
const MAX_TOPIC_TERMS = 12;
/** Bead titles searched at most (in-progress ones come first). */
const MAX_BEAD_TOPICS = 8;
/** RRF's constant: how fast a lower rank's contribution fades (60, as in Cormack et al. 2009). */
const RRF_K = 60;
/** The prompt is what the person asks now: its ranking counts twice. */
const PROMPT_WEIGHT = 2;

// An identifier joined by `_`, `.` or `-` (kb_search, tool.execute.after, auto-recall): the index splits
// it into words, so it is searched as a phrase of them — the words next to each other, in order.
// A compound starts where a word does (from inside a long word, each start would scan it again).
const COMPOUND = /(?<![\p{L}\p{N}])[\p{L}\p{N}]+(?:[_.-][\p{L}\p{N}]+)+/gu;

/**
 * The search terms of a text: compound identifiers (each a phrase) and distinct content words, in order of first use.
 */
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

/**
 * At most `max` terms of the candidates (in priority order), keeping the most distinctive: a term that
 * matches no entry is dropped; among the rest, fewer matching entries wins, then earlier in the list.
 * Counting costs one index lookup per term, so short candidate lists are taken as they are.
 */
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

/** The topics of a session: the prompt, each bead title, and the branch with the changed files. */
export function contextTopics(c: SessionContext): Topic[] {
  const topics: Topic[] = [];
  if (c.prompt?.trim()) topics.push({ text: c.prompt, weight: PROMPT_WEIGHT });
  for (const title of c.beadTitles.slice(0, MAX_BEAD_TOPICS)) topics.push({ text: title, weight: 1 });
  const work = [...branchWords(c.branch ?? ''), ...c.changedFiles].join(' ');
  if (work.trim()) topics.push({ text: work, weight: 1 });
  return topics;
}

/** One topic's ranking, and the terms it searched. */
export interface TopicRanking {
  hits: KnowledgeHit[];
  terms: string[];
}

/** A topic searched on its own (its most distinctive terms): its best `limit` entries. */
export function searchTopic(
  db: Database,
  q: Omit<KnowledgeQuery, 'limit'>,
  text: string,
  limit: number,
  counts: TermCounts,
): TopicRanking {
  const terms = distinctiveTerms(counts, recallTerms(text), MAX_TOPIC_TERMS);
  return { hits: searchKnowledge(db, { ...q, terms, limit }, counts), terms };
}

/**
 * The rankings of the topics fused, in the topics' order (it breaks exact ties); best first. Also returns the terms
 * searched.
 */
export function fuseTopics(
  rankings: (TopicRanking & { weight: number })[],
  limit: number,
): { hits: KnowledgeHit[]; terms: string[] } {
  const fused = new Map<number, { hit: KnowledgeHit; score: number }>();
  for (const { hits, weight } of rankings) {
    hits.forEach((hit, rank) => {
      const f = fused.get(hit.id) ?? { hit, score: 0 };
      f.score += weight / (RRF_K + rank + 1);
      fused.set(hit.id, f);
    });
  }
  const hits = [...fused.values()]
    .sort((a, b) => b.score - a.score || b.hit.score - a.hit.score || b.hit.ts - a.hit.ts)
    .map((f) => f.hit);
  return { hits: hits.slice(0, limit), terms: [...new Set(rankings.flatMap((r) => r.terms))] };
}

/** Each topic searched on its own, the rankings fused; best first. Also returns the terms searched. */
export function searchTopics(
  db: Database,
  q: Omit<KnowledgeQuery, 'limit'>,
  topics: Topic[],
  limit: number,
): { hits: KnowledgeHit[]; terms: string[] } {
  const counts = new TermCounts(db, q.newest); // topics share words: each is counted once
  return fuseTopics(
    topics.map((t) => ({ ...searchTopic(db, q, t.text, limit, counts), weight: t.weight })),
    limit,
  );
}
