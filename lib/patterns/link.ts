import { contentTerms, identifiers } from '../core/text.js';
import type { Finding } from './verdict.js';
import { conflicts, sharedIdentifiers } from './identity.js';
import type { TermWeight } from './index/index.js';

// Which patterns a finding applies (SPEC §3.9.1). A finding speaks of the concrete change, the rule in general
// words, so the link is what the finding cites, else how much of the rule it covers: stemmed content words
// weighted by rarity, identifiers double (thresholds: docs/decisions.md, "Learning"). Pure: the caller records
// the links in the event log, so a replay never runs this again.

/** The least share of a rule's weighted terms a finding must cover, and of distinct terms shared, to link. */
export const LINK_MIN_COVERAGE = 0.25;
export const LINK_MIN_SHARED = 2;
const IDENTIFIER_BOOST = 2;
/** At most this many patterns named by one finding (an event line stays small). */
export const MAX_CITED = 5;

export interface LinkCandidate {
  id: string;
  text: string;
}

/** Weights from how many of `texts` hold each term: the role's, when its patterns are at hand. */
export function weightsAmong(texts: string[]): TermWeight {
  const df = new Map<string, number>();
  for (const text of texts) for (const t of contentTerms(text).keys()) df.set(t, (df.get(t) ?? 0) + 1);
  return (t) => Math.log(1 + texts.length / (df.get(t) ?? 1));
}

export type LinkMatch = 'explicit' | 'text' | 'embedding' | 'self';

export interface FindingLink {
  finding: string;
  /** Without its citations (what explain shows). */
  summary: string;
  patterns: string[];
  match: LinkMatch;
}

const CITATION = /\[(p[0-9a-f]{4,15})\]/gi;

export function summaryWithoutCitations(summary: string): string {
  return summary.replace(CITATION, ' ').replace(/\s+/g, ' ').trim();
}

/** Pattern ids (or id prefixes) a finding cites: its `patterns` list and `[p…]` tags in its summary. */
export function citedIds(finding: Finding): string[] {
  const ids = [...(finding.patterns ?? []), ...[...(finding.summary ?? '').matchAll(CITATION)].map((m) => m[1])];
  return [...new Set(ids.map((id) => id.toLowerCase()).filter((id) => /^p[0-9a-f]{4,15}$/.test(id)))].slice(0, MAX_CITED);
}

export function findingText(finding: Finding): string {
  return [finding.summary, finding.fix_hint, finding.root_cause?.replace(/_/g, ' ')].filter((t) => t?.trim()).join('\n');
}

/**
 * The terms a finding covers a rule with: its text's and its location's words, but not a path's pieces
 * (`docs`, `md` would meet any rule naming a file in docs/; the path itself is an identifier).
 */
function findingTerms(finding: Finding): Terms {
  const terms = new Map(contentTerms(findingText(finding)));
  for (const [t, identifier] of contentTerms(finding.location ?? '')) if (!identifier && !terms.has(t)) terms.set(t, false);
  return terms;
}

function findingIdentifiers(finding: Finding): Set<string> {
  return identifiers([findingText(finding), finding.location ?? ''].join('\n'));
}

type Terms = Map<string, boolean>;

/** How much of the rule the finding covers, weighted (0..1), and how many terms they share. */
export function coverage(finding: Terms, rule: Terms, weight: TermWeight): { score: number; shared: number } {
  let total = 0;
  let covered = 0;
  let shared = 0;
  for (const [term, identifier] of rule) {
    const w = weight(term) * (identifier ? IDENTIFIER_BOOST : 1);
    total += w;
    if (finding.has(term)) {
      covered += w;
      shared++;
    }
  }
  return { score: total > 0 ? covered / total : 0, shared };
}

/** Each candidate's terms and identifiers, cached: every finding of a deliberation is weighed against the same ones. */
const candidateTerms = new WeakMap<LinkCandidate, Terms>();
const candidateIdentifiers = new WeakMap<LinkCandidate, Set<string>>();

function termsOf(c: LinkCandidate): Terms {
  let terms = candidateTerms.get(c);
  if (!terms) candidateTerms.set(c, (terms = contentTerms(c.text)));
  return terms;
}

/** Whether the finding names an identifier of the pattern's text (as linkFinding counts it). */
export function namesIdentifierOf(finding: Finding, patternText: string): boolean {
  return sharedIdentifiers(findingText(finding), findingIdentifiers(finding), patternText, identifiers(patternText)) > 0;
}

function identifiersOf(c: LinkCandidate): Set<string> {
  let ids = candidateIdentifiers.get(c);
  if (!ids) candidateIdentifiers.set(c, (ids = identifiers(c.text)));
  return ids;
}

/** The candidate the finding covers best past both thresholds, ties to the lower id. */
export function bestCandidate(
  finding: Finding,
  candidates: LinkCandidate[],
  weight: TermWeight,
): { id: string; score: number } | undefined {
  const wanted = findingTerms(finding);
  let best: { id: string; score: number } | undefined;
  for (const c of candidates) {
    const { score, shared } = coverage(wanted, termsOf(c), weight);
    if (score < LINK_MIN_COVERAGE || shared < LINK_MIN_SHARED) continue;
    if (!best || score > best.score || (score === best.score && c.id < best.id)) best = { id: c.id, score };
  }
  return best;
}

export interface LinkContext {
  role: string;
  /** Tier 1: the deliberation's own items and the patterns injected for this run. */
  first: { id: string; text: string }[];
  byPrefix: (prefix: string) => string[];
  /** Tier 2, asked only when tier 1 has no match. */
  others: (findingText: string) => { id: string; text: string }[];
  weight: TermWeight;
}

/**
 * Link one finding (SPEC §3.9.1, §3.10.5): the patterns it cites; else in tier 1 the one naming its identifiers
 * when exactly one does, else the best covered; then tier 2. A pattern naming a near miss of the finding's
 * identifiers is never its link. With the validator's `reason`, the reason's words count too.
 */
export function linkFinding(
  finding: Finding,
  ctx: LinkContext,
  reason?: string,
): { patterns: string[]; match: 'explicit' | 'text' } | undefined {
  const cited: string[] = [];
  for (const prefix of citedIds(finding)) {
    const near = ctx.first.filter((c) => c.id.startsWith(prefix)).map((c) => c.id);
    const ids = near.length ? [...new Set(near)] : ctx.byPrefix(prefix);
    if (ids.length === 1 && !cited.includes(ids[0])) cited.push(ids[0]);
  }
  if (cited.length) return { patterns: cited, match: 'explicit' };
  const text = findingText(finding);
  const named = findingIdentifiers(finding);
  const fits = (c: LinkCandidate) => !conflicts(named, identifiersOf(c));
  const first = uniqueById(ctx.first).filter(fits);
  const naming = first.filter((c) => sharedIdentifiers(text, named, c.text, identifiersOf(c)) > 0);
  if (naming.length === 1) return { patterns: [naming[0].id], match: 'text' };
  const read = reason ? { ...finding, summary: `${finding.summary ?? ''}\n${reason}` } : finding;
  const firstIds = new Set(ctx.first.map((c) => c.id));
  const best =
    (naming.length > 1 ? bestCandidate(read, naming, ctx.weight) : undefined) ??
    bestCandidate(read, first, ctx.weight) ??
    bestCandidate(
      read,
      ctx.others(findingText(read)).filter((c) => !firstIds.has(c.id) && fits(c)),
      ctx.weight,
    );
  return best && { patterns: [best.id], match: 'text' };
}

function uniqueById<T extends { id: string }>(list: T[]): T[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.id) && seen.add(x.id));
}
