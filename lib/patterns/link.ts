import { contentTerms, identifiers } from '../core/text.js';
import type { Finding } from './verdict.js';
import { conflicts, sharedIdentifiers } from './identity.js';
import type { TermWeight } from './index/index.js';

// Which patterns a finding applies (SPEC §3.9.1; docs/internals.md, "Links"; thresholds: docs/decisions.md,
// "Learning"). Pure: the links are recorded, so a replay never runs this again.

export const LINK_MIN_COVERAGE = 0.25;
export const LINK_MIN_SHARED = 2;
const IDENTIFIER_BOOST = 2;
/** An event line stays small. */
export const MAX_CITED = 5;

export interface LinkCandidate {
  id: string;
  text: string;
}

/** The role's, when its patterns are at hand. */
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

/** Ids or prefixes: its `patterns` list and `[p…]` tags in its summary. */
export function citedIds(finding: Finding): string[] {
  const ids = [...(finding.patterns ?? []), ...[...(finding.summary ?? '').matchAll(CITATION)].map((m) => m[1])];
  return [...new Set(ids.map((id) => id.toLowerCase()).filter((id) => /^p[0-9a-f]{4,15}$/.test(id)))].slice(0, MAX_CITED);
}

export function findingText(finding: Finding): string {
  return [finding.summary, finding.fix_hint, finding.root_cause?.replace(/_/g, ' ')].filter((t) => t?.trim()).join('\n');
}

/** Not a path's pieces: `docs`, `md` would meet any rule naming a file in docs/. */
function findingTerms(finding: Finding): Terms {
  const terms = new Map(contentTerms(findingText(finding)));
  for (const [t, identifier] of contentTerms(finding.location ?? '')) if (!identifier && !terms.has(t)) terms.set(t, false);
  return terms;
}

function findingIdentifiers(finding: Finding): Set<string> {
  return identifiers([findingText(finding), finding.location ?? ''].join('\n'));
}

type Terms = Map<string, boolean>;

/** Weighted (0..1), and how many terms they share. */
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

/** Every finding is weighed against the same candidates. */
const candidateTerms = new WeakMap<LinkCandidate, Terms>();
const candidateIdentifiers = new WeakMap<LinkCandidate, Set<string>>();

function termsOf(c: LinkCandidate): Terms {
  let terms = candidateTerms.get(c);
  if (!terms) candidateTerms.set(c, (terms = contentTerms(c.text)));
  return terms;
}

/** As linkFinding counts it. */
export function namesIdentifierOf(finding: Finding, patternText: string): boolean {
  return sharedIdentifiers(findingText(finding), findingIdentifiers(finding), patternText, identifiers(patternText)) > 0;
}

function identifiersOf(c: LinkCandidate): Set<string> {
  let ids = candidateIdentifiers.get(c);
  if (!ids) candidateIdentifiers.set(c, (ids = identifiers(c.text)));
  return ids;
}

/** Past both thresholds, ties to the lower id. */
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
  /** The deliberation's own items and the patterns injected for this run. */
  first: { id: string; text: string }[];
  byPrefix: (prefix: string) => string[];
  /** Asked only when tier 1 has no match. */
  others: (findingText: string) => { id: string; text: string }[];
  weight: TermWeight;
}

/** SPEC §3.9.1, §3.10.5. Never a pattern naming a near miss of its identifiers; the validator's `reason` counts too. */
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
