import { readFileSync } from 'node:fs';
import type { Store } from '../store/store.js';
import type { EventPayload } from '../events/types.js';
import { parseVerdict, findingById, type Verdict } from './verdict.js';
import { evidenceLevel, type EvidenceLevel } from './evidence.js';
import { roleWeight, sameKindRoles } from '../store/config.js';
import { contentTokenSet, normaliseText, overlapCoefficient, stripMarkdown } from '../core/text.js';
import { dismissedPatternIds, injectedPatternIds, listPatterns, rankPatterns, type Pattern } from './queries.js';
import { nowMs } from '../core/clock.js';
import { CairnError } from '../core/errors.js';
import { autoDeprecationReason } from './lifecycle.js';
import { appendEvents, patternDb } from '../events/log.js';

// feedback-loop (SPEC §3.7): a validator's verdict corrects the adversarial role's patterns.
// False positives are penalised (weighted by the adversarial role); an effective PASS backed by
// L1/L2 evidence reinforces what was injected, and ages what was injected but not reinforced.

export const FUZZY_MIN_OVERLAP = 0.5;
export const FALLBACK_TOP = 5;

export interface FeedbackInput {
  adversarialRole: string;
  validatorRole: string;
  issue: string | null;
  run: string | null;
  files: string[];
  /** Texts given directly; otherwise the latest stored deliberation of the role for the issue/run. */
  validatorText?: string;
  adversarialText?: string;
  dryRun: boolean;
}

export interface Penalty {
  finding: string;
  pattern: string;
  text: string;
  match: 'exact' | 'fuzzy';
  weight: number;
  retracted: boolean;
  regressed: boolean;
}

export interface FeedbackReport {
  verdict: 'PASS' | 'FAIL' | null;
  effective: 'PASS' | 'FAIL' | null;
  evidence: EvidenceLevel | null;
  problems: string[];
  penalised: Penalty[];
  /** Ids whose finding could not be found, or matched no pattern. */
  unmatched: { finding: string; reason: string }[];
  /** Patterns already penalised for this issue/run (a re-run of the same feedback). */
  alreadyDismissed: string[];
  /** Penalised patterns that now meet an automatic deprecation rule (maintain, run opportunistically). */
  deprecated: string[];
  gate: 'reinforced' | 'evidence-too-weak' | 'not-a-pass' | 'no-verdict';
  reinforced: string[];
  aged: string[];
  dryRun: boolean;
}

/** The text of the latest stored deliberation of a role for this issue/run. */
export function latestDeliberationText(store: Store, role: string, issue: string | null, run: string | null): { text: string; files: string[] } | undefined {
  const row = patternDb(store)
    .prepare('SELECT id, files FROM deliberations WHERE project = ? AND role = ? AND issue = ? AND run = ? ORDER BY ts DESC, id DESC LIMIT 1')
    .get(store.project, role, issue ?? '', run ?? '') as { id: string; files: string } | undefined;
  if (!row) return undefined;
  // The log is shared through git: its path field is not trusted. The artifact's place follows from the id.
  if (!/^d[0-9a-z]{26}$/.test(row.id)) throw new CairnError('input', `the stored ${role} deliberation has a malformed id ${JSON.stringify(row.id.slice(0, 40))}`);
  const path = store.artifactPath('deliberations', `${row.id}.md`);
  try {
    return { text: readFileSync(path, 'utf8'), files: JSON.parse(row.files) };
  } catch (err) {
    throw new CairnError('store', `the stored ${role} deliberation ${row.id} is unreadable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** What a dismissed id refers to: its finding's summary, location and fix hint, or the line naming it. */
export function dismissedTexts(id: string, adversarialVerdict: Verdict | null, adversarialText: string): string[] {
  const finding = findingById(adversarialVerdict, id);
  if (finding) return [finding.summary, finding.location, finding.fix_hint].filter((t): t is string => !!t && t.trim() !== '');
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const names = new RegExp(`(^|[^A-Za-z0-9_])${escaped}([^A-Za-z0-9_]|$)`, 'i');
  const line = adversarialText.split('\n').find((l) => names.test(l) && !/verdict-json/.test(l));
  if (!line) return [];
  const withoutId = stripMarkdown(line).replace(new RegExp(escaped, 'gi'), ' ').replace(/^[\s\-*+>#:|.)(\d—–]+/, '');
  return withoutId.trim() ? [withoutId.trim()] : [];
}

/**
 * The pattern a dismissed finding is about: an exact normalised substring either way first, else the
 * best fuzzy overlap of content words (≥ 0.5). Ties go to patterns injected in this run.
 */
export function matchPattern(texts: string[], patterns: Pattern[], injected: Set<string>): { pattern: Pattern; match: 'exact' | 'fuzzy' } | undefined {
  const prefer = (a: Pattern, b: Pattern) => Number(injected.has(b.id)) - Number(injected.has(a.id)) || (a.id < b.id ? -1 : 1);
  for (const text of texts) {
    const wanted = normaliseText(text);
    if (wanted.length < 4) continue;
    const exact = patterns.filter((p) => {
      const norm = normaliseText(p.text);
      return norm.includes(wanted) || wanted.includes(norm);
    });
    if (exact.length) return { pattern: exact.sort(prefer)[0], match: 'exact' };
  }
  let best: { pattern: Pattern; score: number } | undefined;
  for (const text of texts) {
    const tokens = contentTokenSet(text);
    for (const p of patterns) {
      const score = overlapCoefficient(tokens, contentTokenSet(p.text));
      if (score < FUZZY_MIN_OVERLAP) continue;
      if (!best || score > best.score || (score === best.score && prefer(p, best.pattern) < 0)) best = { pattern: p, score };
    }
    if (best) break; // the summary decides before location and fix hint do
  }
  return best && { pattern: best.pattern, match: 'fuzzy' };
}

function sightingAddedSuccess(store: Store, issue: string, run: string, pattern: string): boolean {
  return !!patternDb(store)
    .prepare('SELECT 1 FROM sightings WHERE project = ? AND issue = ? AND run = ? AND pattern = ? AND added_success = 1 AND retracted = 0 LIMIT 1')
    .get(store.project, issue, run, pattern);
}

/** What this issue/run already reinforced and aged: each happens once per run. */
function runMarks(store: Store, issue: string, run: string): { reinforced: Set<string>; aged: Set<string> } {
  const rows = patternDb(store).prepare('SELECT pattern, kind FROM run_marks WHERE project = ? AND issue = ? AND run = ?').all(store.project, issue, run) as {
    pattern: string;
    kind: string;
  }[];
  return {
    reinforced: new Set(rows.filter((r) => r.kind === 'reinforced').map((r) => r.pattern)),
    aged: new Set(rows.filter((r) => r.kind === 'aged').map((r) => r.pattern)),
  };
}

export function runFeedback(store: Store, input: FeedbackInput): FeedbackReport {
  const advRole = input.adversarialRole.toLowerCase();
  const valRole = input.validatorRole.toLowerCase();
  const issue = input.issue ?? '';
  const run = input.run ?? '';
  const scoped = input.issue !== null || input.run !== null;

  const validator = input.validatorText ?? latestDeliberationText(store, valRole, input.issue, input.run)?.text;
  if (validator === undefined) throw new CairnError('input', `no ${valRole} text: give --validator-file, stdin, or store the ${valRole} deliberation for this issue/run first`);
  const storedAdversarial = input.adversarialText === undefined ? latestDeliberationText(store, advRole, input.issue, input.run) : undefined;
  const adversarial = input.adversarialText ?? storedAdversarial?.text ?? '';
  const changedFiles = input.files.length ? input.files : (storedAdversarial?.files ?? []);

  const parsed = parseVerdict(validator);
  const report: FeedbackReport = {
    verdict: parsed.verdict?.verdict ?? null,
    effective: parsed.verdict?.effective ?? null,
    evidence: adversarial ? evidenceLevel(adversarial, changedFiles) : null,
    problems: parsed.problems,
    penalised: [],
    unmatched: [],
    alreadyDismissed: [],
    deprecated: [],
    gate: 'no-verdict',
    reinforced: [],
    aged: [],
    dryRun: input.dryRun,
  };
  if (!parsed.verdict) return report;
  const verdict = parsed.verdict;
  const adversarialVerdict = parseVerdict(adversarial).verdict;
  const injected = scoped ? injectedPatternIds(patternDb(store), store.project, issue, run, advRole) : [];
  const injectedSet = new Set(injected);
  // Dismissed earlier in this run (a re-run, an earlier iteration): not penalised twice, never reinforced.
  const dismissedBefore = scoped ? dismissedPatternIds(patternDb(store), store.project, issue, run) : new Set<string>();
  const candidates = listPatterns(patternDb(store), store.project, { roles: [advRole], includeDeprecated: true });
  const weight = roleWeight(store.config, advRole);
  const events: EventPayload[] = [];
  const penalisedIds = new Set<string>();

  for (const id of verdict.false_positives) {
    const texts = dismissedTexts(id, adversarialVerdict, adversarial);
    if (texts.length === 0) {
      report.unmatched.push({ finding: id, reason: adversarial ? `no finding or line names ${id} in the ${advRole} text` : `no ${advRole} text to look ${id} up in` });
      continue;
    }
    const hit = matchPattern(texts, candidates, injectedSet);
    if (!hit) {
      report.unmatched.push({ finding: id, reason: `no ${advRole} pattern matches "${texts[0].slice(0, 80)}"` });
      continue;
    }
    const p = hit.pattern;
    if (penalisedIds.has(p.id) || report.alreadyDismissed.includes(p.id)) continue; // two ids naming one pattern: one dismissal
    if (dismissedBefore.has(p.id)) {
      report.alreadyDismissed.push(p.id);
      continue;
    }
    penalisedIds.add(p.id);
    const retracted = scoped && sightingAddedSuccess(store, issue, run, p.id);
    const regressed = p.was_validated === 1;
    events.push({ type: 'pattern.ignored', pattern: p.id, role: advRole, weight, issue: input.issue, run: input.run, finding: id, retract: retracted });
    if (regressed) events.push({ type: 'pattern.regressed', pattern: p.id, issue: input.issue, run: input.run, finding: id });
    report.penalised.push({ finding: id, pattern: p.id, text: p.text, match: hit.match, weight, retracted, regressed });
    // `cairn maintain`'s rules, applied at once to the pattern as this dismissal leaves it.
    const after = { ...p, ignore_count: p.ignore_count + 1, ignore_weight: p.ignore_weight + weight, success_count: Math.max(0, p.success_count - (retracted ? 1 : 0)) };
    const reason = autoDeprecationReason(after, nowMs());
    if (reason) {
      events.push({ type: 'pattern.deprecated', pattern: p.id, reason, auto: true });
      report.deprecated.push(p.id);
    }
  }

  if (verdict.effective !== 'PASS') report.gate = 'not-a-pass';
  else if (report.evidence !== 'L1' && report.evidence !== 'L2') report.gate = 'evidence-too-weak';
  else {
    report.gate = 'reinforced';
    // Injected patterns may come from A's other same-kind roles (via:), so look them all up.
    const live = new Map(listPatterns(patternDb(store), store.project, { roles: sameKindRoles(store.config, advRole), includeDeprecated: true }).map((p) => [p.id, p]));
    const eligible = (id: string) => !penalisedIds.has(id) && !dismissedBefore.has(id) && live.get(id)?.lifecycle !== 'deprecated';
    let toReinforce: string[];
    if (injected.length) {
      const files = new Set(input.files);
      toReinforce = injected.filter((id) => eligible(id) && (files.size === 0 || (live.get(id)?.files ?? []).some((f) => files.has(f))));
    } else {
      const best = rankPatterns(patternDb(store), store.project, {
        roles: [advRole],
        ctx: { now: nowMs(), role: advRole },
        excludeDismissed: scoped ? { issue, run } : undefined,
        limit: FALLBACK_TOP + penalisedIds.size,
      });
      toReinforce = best.map((r) => r.pattern.id).filter(eligible).slice(0, FALLBACK_TOP);
    }
    const reinforcedSet = new Set(toReinforce);
    const marked = scoped ? runMarks(store, issue, run) : { reinforced: new Set<string>(), aged: new Set<string>() };
    report.reinforced = toReinforce.filter((id) => !marked.reinforced.has(id));
    report.aged = injected.filter((id) => !reinforcedSet.has(id) && eligible(id) && !marked.aged.has(id));
    for (const id of report.reinforced) events.push({ type: 'pattern.reinforced', pattern: id, issue: input.issue, run: input.run });
    for (const id of report.aged) events.push({ type: 'pattern.aged', pattern: id, issue: input.issue, run: input.run });
  }
  if (!input.dryRun) appendEvents(store, events);
  return report;
}
