import { contentTerms, identifiers } from '../core/text.js';
import type { Finding } from './verdict.js';
import { conflicts, sharedIdentifiers } from './identity.js';
import type { TermWeight } from './index/index.js';

// Which patterns a finding applies (SPEC §3.9.1). A finding is worded about the concrete change
// ("The export endpoint is missing from docs/openapi.yaml"), the rule behind it in general words
// ("Every new HTTP endpoint must be documented in docs/openapi.yaml before merge"), so the link is
// found by what the finding cites (pattern ids), else by how much of the rule the finding covers:
// stemmed content words, weighted by how rare they are among the role's patterns, the rule's
// identifiers (paths, file and code names) twice. Pure: the caller records the links in the event
// log, so a replay never runs this again.
//
// The constants were chosen on the tuning half of bench/learning/paraphrases.js (one wording per
// check) and are reported on the held-out half (docs/decisions.md, "Learning"): a single shared word (`time`,
// `tenant`) linked too often to a short unrelated rule, and boosting identifiers that only the
// finding has (its own paths: `src/api/…`) linked to rules that merely say "API".

/** The least share of a rule's weighted terms a finding must cover to be linked to it. */
export const LINK_MIN_COVERAGE = 0.25;
/** ...and the least number of distinct terms the two share. */
export const LINK_MIN_SHARED = 2;
/** The rule's identifier terms weigh this much more than its words. */
const IDENTIFIER_BOOST = 2;
/** At most this many patterns named by one finding (an event line stays small). */
export const MAX_CITED = 5;

export interface LinkCandidate {
  id: string;
  text: string;
}

/**
 * Weights from how many of `texts` hold each term (`ln(1 + texts / holding)`): the role, when its patterns are at
 * hand.
 */
export function weightsAmong(texts: string[]): TermWeight {
  const df = new Map<string, number>();
  for (const text of texts) for (const t of contentTerms(text).keys()) df.set(t, (df.get(t) ?? 0) + 1);
  return (t) => Math.log(1 + texts.length / (df.get(t) ?? 1));
}

export type LinkMatch = 'explicit' | 'text' | 'embedding' | 'self';

export interface FindingLink {
  finding: string;
  /** The finding's summary without its citations (what explain shows). */
  summary: string;
  patterns: string[];
  match: LinkMatch;
}

const CITATION = /\[(p[0-9a-f]{4,15})\]/gi;

/** The finding's summary without `[p3f2a1]` citations. */
export function summaryWithoutCitations(summary: string): string {
  return summary.replace(CITATION, ' ').replace(/\s+/g, ' ').trim();
}

/** Pattern ids (or id prefixes) a finding cites: its `patterns` list and `[p…]` tags in its summary. */
export function citedIds(finding: Finding): string[] {
  const ids = [...(finding.patterns ?? []), ...[...(finding.summary ?? '').matchAll(CITATION)].map((m) => m[1])];
  return [...new Set(ids.map((id) => id.toLowerCase()).filter((id) => /^p[0-9a-f]{4,15}$/.test(id)))].slice(
    0,
    MAX_CITED,
  );
}

/** The text of a finding that speaks about the rule: summary, fix hint, root cause. */
export function findingText(finding: Finding): string {
  return [finding.summary, finding.fix_hint, finding.root_cause?.replace(/_/g, ' ')]
    .filter((t) => t && t.trim())
    .join('\n');
}

/**
 * The terms a finding covers a rule with: its text's, and the words of its location (`plan §Changes`)
 * but not the pieces of a path there (`docs/plans/current.md:109`: `docs` and `md` would meet any rule
 * naming a file in docs/; the path itself is an identifier, findingIdentifiers).
 */
function findingTerms(finding: Finding): Terms {
  const terms = new Map(contentTerms(findingText(finding)));
  for (const [t, identifier] of contentTerms(finding.location ?? ''))
    if (!identifier && !terms.has(t)) terms.set(t, false);
  return terms;
}

/** The identifiers a finding names, its location's among them (a rule naming that file is named by it). */
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

/**
 * Each candidate's terms and identifiers, for as long as the candidate lives: a deliberation's findings
 * are each weighed against the same tier-1 candidates (a 64 KB deliberation: 26 findings × ~100 candidates).
 */
const candidateTerms = new WeakMap<LinkCandidate, Terms>();
const candidateIdentifiers = new WeakMap<LinkCandidate, Set<string>>();

function termsOf(c: LinkCandidate): Terms {
  let terms = candidateTerms.get(c);
  if (!terms) candidateTerms.set(c, (terms = contentTerms(c.text)));
  return terms;
}

/** Whether the finding names an identifier of the pattern's text (as linkFinding counts it). */
export function namesIdentifierOf(finding: Finding, patternText: string): boolean {
  return (
    sharedIdentifiers(findingText(finding), findingIdentifiers(finding), patternText, identifiers(patternText)) > 0
  );
}

function identifiersOf(c: LinkCandidate): Set<string> {
  let ids = candidateIdentifiers.get(c);
  if (!ids) candidateIdentifiers.set(c, (ids = identifiers(c.text)));
  return ids;
}

/**
 * The candidate the finding covers best (at least LINK_MIN_COVERAGE and LINK_MIN_SHARED terms), or undefined; ties
 * go to the lower id.
 */
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
  /** Tier 1: the deliberation's own items and the patterns injected for this run, with their texts. */
  first: { id: string; text: string }[];
  /** Patterns whose id starts with a cited prefix (resolved once per finding). */
  byPrefix: (prefix: string) => string[];
  /** Tier 2: the role's patterns that share words with the finding (asked only when tier 1 has no match). */
  others: (findingText: string) => { id: string; text: string }[];
  /** How rare each term is among the role's patterns. */
  weight: TermWeight;
}

/**
 * Link one finding (SPEC §3.9.1, §3.10.5): the patterns it cites (resolved among tier 1 first, else
 * among the role's patterns by unique prefix); else, among the patterns the adversary applied (tier 1),
 * the one naming the finding's identifiers when exactly one does, else the one it covers best among
 * those naming them, else among all of tier 1; then tier 2. A pattern naming a near miss of one of the
 * finding's identifiers (`helper3` for a finding about `helper18`) is never its link. With the
 * validator's `reason` for dismissing it, the reason's words count too (but not its identifiers).
 * Undefined when nothing fits.
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
