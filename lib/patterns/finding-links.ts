import type { Store } from '../store/store.js';
import { findingById, type Verdict } from './verdict.js';
import { findingNamedByLine } from './finding-prose.js';
import { patternId } from '../core/ids.js';
import { deliberationLinks, getPattern, injectedPatternIds, patternTexts, type StoredLink } from './queries.js';
import { extractPatterns } from './extract.js';
import { linkContext } from './deliberation.js';
import { roleLookups } from './index/index.js';
import { linkFinding, namesIdentifierOf, summaryWithoutCitations } from './link.js';
import { patternDb } from '../events/log.js';

// Which patterns a verdict's findings applied (SPEC §3.9.1), and where a validator's reason for a dismissal leads.

export interface FindingLinks {
  of(id: string): StoredLink | undefined;
  /** Read with the validator's reason; none if it names a linked one's identifier. */
  withReason(id: string, reason: string, linked: string[]): string[] | undefined;
}

/** Recorded (SPEC §3.9.1), or found now for a text given as a file. */
export function findingLinks(
  store: Store,
  role: string,
  scope: { issue: string; run: string } | undefined,
  stored: string | undefined,
  adversary: { text: string; verdict: Verdict | null },
): FindingLinks {
  const recorded = stored ? deliberationLinks(patternDb(store), store.project, stored) : new Map<string, StoredLink>();
  const { text, verdict } = adversary;
  let ctx: ReturnType<typeof linkContext> | undefined;
  const context = () => {
    if (!ctx) {
      const injected = scope ? injectedPatternIds(patternDb(store), store.project, scope.issue, scope.run, role) : [];
      const own = extractPatterns(text, null).items.map((e) => patternId(store.project, role, e.text));
      const first = patternTexts(patternDb(store), store.project, [...new Set([...injected, ...own])]);
      ctx = linkContext(store, roleLookups(patternDb(store), store.project, role), first);
    }
    return ctx;
  };
  const findingOf = (id: string) => findingById(verdict, id) ?? findingNamedByLine(id, text);
  return {
    of(id) {
      const link = recorded.get(id) ?? [...recorded].find(([f]) => f.toLowerCase() === id.toLowerCase())?.[1];
      if (link) return link;
      if (stored && findingById(verdict, id)) return undefined; // stored, linked to nothing
      const finding = findingOf(id);
      if (!finding) return undefined;
      const summary = summaryWithoutCitations(finding.summary ?? '');
      // stop before anything is recorded (SPEC §2)
      store.deadline.check('linking the findings to patterns');
      const live = linkFinding(finding, context());
      if (live) return { ...live, summary };
      const self = getPattern(patternDb(store), store.project, patternId(store.project, role, summary));
      return self && self.role === role ? { patterns: [self.id], match: 'self', summary } : undefined;
    },
    withReason(id, reason, linked) {
      const finding = findingOf(id);
      if (!finding) return undefined;
      // what the finding names outweighs the reason (which often names the rule that replaced this one)
      if (patternTexts(patternDb(store), store.project, linked).some((p) => namesIdentifierOf(finding, p.text))) return undefined;
      // the finding's own citations, if any, were resolved when it was linked
      const read = { ...finding, summary: summaryWithoutCitations(finding.summary ?? ''), patterns: undefined };
      store.deadline.check('linking the findings to patterns');
      return linkFinding(read, context(), reason)?.patterns;
    },
  };
}

/** A link by words is read again with the validator's reason, which may name the rule's premise; others stand. */
export function dismissalTargets(links: FindingLinks, id: string, reason: string): { pattern: string; match: string }[] {
  const link = links.of(id);
  const recorded = (link?.patterns ?? []).map((pattern) => ({ pattern, match: link!.match }));
  if (!reason || (link && link.match !== 'text' && link.match !== 'self')) return recorded;
  const read = links.withReason(id, reason, link?.match === 'text' ? link.patterns : [])?.filter((p) => !link?.patterns.includes(p)) ?? [];
  if (read.length === 0) return recorded;
  const kept = link?.match === 'self' ? recorded : [];
  return [...kept, ...read.map((pattern) => ({ pattern, match: 'reason' }))];
}
