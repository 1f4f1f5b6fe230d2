import { sanitizeUntrusted } from '../core/sanitize.js';
import type { Store } from '../store/store.js';
import type { EventPayload } from '../events/types.js';
import { parseVerdict, findingById, type Verdict } from './verdict.js';
import { findingNamedByLine, validatorReason } from './finding-prose.js';
import { evidenceLevel, type EvidenceLevel } from './evidence.js';
import { roleWeight } from '../store/config.js';
import {
  appliedPatternIds,
  dismissedPatternIds,
  getPattern,
  injectedPatternIds,
  runMarks,
  sightingAddedSuccess,
  type Pattern,
} from './queries.js';
import { nowMs } from '../core/clock.js';
import { CairnError } from '../core/errors.js';
import { autoDeprecationReason } from './lifecycle.js';
import { latestDeliberationText } from './deliberation.js';
import { dismissalTargets, findingLinks, type FindingLinks } from './finding-links.js';
import { shortId } from './block.js';
import { appendEvents, patternDb } from '../events/log.js';
import { withTested } from '../events/credit.js';

// feedback-loop (SPEC §3.7, §3.9.2): a verdict corrects the adversarial role's patterns.

export interface FeedbackInput {
  adversarialRole: string;
  validatorRole: string;
  issue: string | null;
  run: string | null;
  files: string[];
  /** Else the latest stored deliberation of the role for the issue/run. */
  validatorText?: string;
  adversarialText?: string;
  dryRun: boolean;
}

export interface Penalty {
  finding: string;
  pattern: string;
  text: string;
  /** SPEC §3.9.1; 'reason': through the validator's reason. */
  match: string;
  weight: number;
  retracted: boolean;
  regressed: boolean;
}

export interface Confirmation {
  finding: string;
  patterns: string[];
  reinforced: boolean;
}

export interface FeedbackReport {
  verdict: 'PASS' | 'FAIL' | null;
  effective: 'PASS' | 'FAIL' | null;
  evidence: EvidenceLevel | null;
  problems: string[];
  penalised: Penalty[];
  confirmed: Confirmation[];
  unmatched: { finding: string; reason: string }[];
  /** By a re-run of the same feedback. */
  alreadyDismissed: string[];
  /** Penalised ones now meeting an automatic deprecation rule. */
  deprecated: string[];
  /** Of those, validated before: a rule that stopped being true (SPEC §3.10.6). */
  obsolete: string[];
  gate: 'reinforced' | 'evidence-too-weak' | 'not-a-pass' | 'no-verdict';
  reinforced: string[];
  aged: string[];
  dryRun: boolean;
}

const REASON_RECORDED = 160;

interface Adversary {
  text: string;
  verdict: Verdict | null;
  stored?: { id: string; files: string[] };
}

function readTexts(store: Store, input: FeedbackInput, roles: { adversarial: string; validator: string }) {
  const validator = input.validatorText ?? latestDeliberationText(store, roles.validator, input.issue, input.run)?.text;
  if (validator === undefined) {
    throw new CairnError(
      'input',
      `no ${roles.validator} text: give --validator-file, stdin, ` +
        `or store the ${roles.validator} deliberation for this issue/run first`,
    );
  }
  const stored = input.adversarialText === undefined ? latestDeliberationText(store, roles.adversarial, input.issue, input.run) : undefined;
  const text = input.adversarialText ?? stored?.text ?? '';
  const adversary: Adversary = { text, verdict: parseVerdict(text).verdict, stored };
  return { validator, adversary };
}

interface Run {
  store: Store;
  input: FeedbackInput;
  role: string;
  issue: string;
  run: string;
  scoped: boolean;
  validator: string;
  verdict: Verdict;
  adversary: Adversary;
  links: FindingLinks;
  /** SPEC §3.7: L1/L2 */
  grounded: boolean;
  /** Not penalised twice, never reinforced. */
  dismissedBefore: Set<string>;
  dismissed: Set<string>;
  penalised: Set<string>;
  /** Each happens once per run. */
  marked: { reinforced: Set<string>; aged: Set<string> };
  patternOf(id: string): Pattern | undefined;
  events: EventPayload[];
  report: FeedbackReport;
}

export function runFeedback(store: Store, input: FeedbackInput): FeedbackReport {
  const roles = { adversarial: input.adversarialRole.toLowerCase(), validator: input.validatorRole.toLowerCase() };
  const { validator, adversary } = readTexts(store, input, roles);
  const parsed = parseVerdict(validator);
  const changedFiles = input.files.length ? input.files : (adversary.stored?.files ?? []);
  const report: FeedbackReport = {
    verdict: parsed.verdict?.verdict ?? null,
    effective: parsed.verdict?.effective ?? null,
    evidence: adversary.text ? evidenceLevel(adversary.text, changedFiles) : null,
    problems: parsed.problems,
    penalised: [],
    confirmed: [],
    unmatched: [],
    alreadyDismissed: [],
    deprecated: [],
    obsolete: [],
    gate: 'no-verdict',
    reinforced: [],
    aged: [],
    dryRun: input.dryRun,
  };
  if (!parsed.verdict) return report;
  const run = startRun(store, input, roles.adversarial, validator, parsed.verdict, adversary, report);
  penaliseDismissed(run);
  reinforceKept(run);
  gateThePass(run);
  if (!input.dryRun) appendEvents(store, run.events);
  return report;
}

function startRun(
  store: Store,
  input: FeedbackInput,
  role: string,
  validator: string,
  verdict: Verdict,
  adversary: Adversary,
  report: FeedbackReport,
): Run {
  const [issue, run] = [input.issue ?? '', input.run ?? ''];
  const scoped = input.issue !== null || input.run !== null;
  const patterns = new Map<string, Pattern | undefined>();
  const patternOf = (id: string) => {
    if (!patterns.has(id)) patterns.set(id, getPattern(patternDb(store), store.project, id));
    return patterns.get(id);
  };
  return {
    store,
    input,
    role,
    issue,
    run,
    scoped,
    validator,
    verdict,
    adversary,
    report,
    patternOf,
    links: findingLinks(store, role, scoped ? { issue, run } : undefined, adversary.stored?.id, adversary),
    grounded: report.evidence === 'L1' || report.evidence === 'L2',
    dismissedBefore: scoped ? dismissedPatternIds(patternDb(store), store.project, issue, run) : new Set<string>(),
    dismissed: new Set(verdict.false_positives.map((id) => id.toLowerCase())),
    penalised: new Set<string>(),
    marked: scoped ? runMarks(patternDb(store), store.project, issue, run) : { reinforced: new Set<string>(), aged: new Set<string>() },
    events: [],
  };
}

/** SPEC §3.7, §3.9.2: by the role's weight, the sighting taken back, maintain's rules applied at once. */
function penaliseDismissed(r: Run): void {
  const { store, input, verdict, adversary, report } = r;
  const weight = roleWeight(store.config, r.role);
  const { halfLife } = store.config.evidence;
  const ids = [
    ...verdict.false_positives,
    ...verdict.must_fix,
    ...verdict.issues.map((f) => f.id),
    ...(adversary.verdict?.issues.map((f) => f.id) ?? []),
  ];
  const findingIds = [...new Set(ids)];
  for (const id of verdict.false_positives) {
    const reason = validatorReason(id, r.validator, findingIds);
    const targets = dismissalTargets(r.links, id, reason);
    if (targets.length === 0) {
      report.unmatched.push({ finding: id, reason: whyUnmatched(r, id) });
      continue;
    }
    for (const { pattern: pid, match } of targets) {
      const p = r.patternOf(pid);
      // two ids naming one pattern: one dismissal
      if (!p || r.penalised.has(pid) || report.alreadyDismissed.includes(pid)) continue;
      if (r.dismissedBefore.has(pid)) {
        report.alreadyDismissed.push(pid);
        continue;
      }
      r.penalised.add(pid);
      const retracted = r.scoped && sightingAddedSuccess(patternDb(store), store.project, r.issue, r.run, pid);
      const regressed = p.was_validated === 1;
      // into the committed log: sanitised (SPEC §4.6)
      const why = match === 'reason' ? { reason: sanitizeUntrusted(reason, { singleLine: true }).slice(0, REASON_RECORDED) } : {};
      const scope = { issue: input.issue, run: input.run };
      r.events.push({
        type: 'pattern.ignored',
        pattern: pid,
        role: p.role,
        weight,
        ...scope,
        finding: id,
        retract: retracted,
        ...why,
        halfLife,
      });
      if (regressed) r.events.push({ type: 'pattern.regressed', pattern: pid, ...scope, finding: id });
      report.penalised.push({ finding: id, pattern: pid, text: p.text, match, weight, retracted, regressed });
      const after = {
        ...p,
        ...withTested(p, { against: weight, strength: 1, halfLife }),
        ignore_count: p.ignore_count + 1,
        untested: Math.max(0, p.untested - (retracted ? 1 : 0)),
      };
      const reasonToDeprecate = autoDeprecationReason(after, nowMs(), store.config.prior);
      if (reasonToDeprecate) {
        r.events.push({ type: 'pattern.deprecated', pattern: pid, reason: reasonToDeprecate, auto: true });
        report.deprecated.push(pid);
        if (regressed) report.obsolete.push(pid);
      }
    }
  }
}

function whyUnmatched(r: Run, id: string): string {
  const { text, verdict } = r.adversary;
  if (!text) return `no ${r.role} text to look ${id} up in`;
  const named = findingById(verdict, id) || findingNamedByLine(id, text);
  return named ? `${id} applies no ${r.role} pattern` : `no finding or line names ${id} in the ${r.role} text`;
}

/** Exists, not deprecated, not dismissed in this run. */
function eligible(r: Run, id: string): boolean {
  const p = r.patternOf(id);
  return !r.penalised.has(id) && !r.dismissedBefore.has(id) && !!p && p.lifecycle !== 'deprecated';
}

/** Once per run: with the finding that tested it (SPEC §3.10.1), else as untested credit. */
function reinforce(r: Run, id: string, finding?: string): void {
  if (!eligible(r, id) || r.marked.reinforced.has(id) || r.report.reinforced.includes(id)) return;
  r.report.reinforced.push(id);
  const halfLife = r.store.config.evidence.halfLife;
  r.events.push({
    type: 'pattern.reinforced',
    pattern: id,
    issue: r.input.issue,
    run: r.input.run,
    ...(finding ? { finding, halfLife } : {}),
  });
}

/** Behind the evidence gate (SPEC §3.9.2). */
function reinforceKept(r: Run): void {
  const kept = [...new Set([...r.verdict.must_fix, ...r.verdict.issues.map((f) => f.id)])].filter(
    (id) => !r.dismissed.has(id.toLowerCase()),
  );
  for (const id of kept) {
    const link = r.links.of(id);
    if (!link) continue;
    r.report.confirmed.push({ finding: id, patterns: link.patterns, reinforced: r.grounded });
    if (r.grounded) for (const pid of link.patterns) reinforce(r, pid, id);
  }
}

/** Reinforces what was applied (in the changed files if given), ages what was injected unused (SPEC §3.7). */
function gateThePass(r: Run): void {
  const { store, input, report } = r;
  if (r.verdict.effective !== 'PASS') report.gate = 'not-a-pass';
  else if (!r.grounded) report.gate = 'evidence-too-weak';
  else {
    report.gate = 'reinforced';
    const raised = (r.adversary.verdict?.issues ?? []).filter((f) => !r.dismissed.has(f.id.toLowerCase()));
    const testedBy = new Map<string, string>();
    for (const f of raised) for (const id of r.links.of(f.id)?.patterns ?? []) if (!testedBy.has(id)) testedBy.set(id, f.id);
    const echoed = r.scoped ? appliedPatternIds(patternDb(store), store.project, r.issue, r.run, r.role) : [];
    const applied = new Set([...echoed, ...testedBy.keys()]);
    const files = new Set(input.files);
    for (const id of [...applied].sort())
      if (files.size === 0 || (r.patternOf(id)?.files ?? []).some((f) => files.has(f))) reinforce(r, id, testedBy.get(id));
    const injected = r.scoped ? injectedPatternIds(patternDb(store), store.project, r.issue, r.run, r.role) : [];
    report.aged = injected.filter((id) => !applied.has(id) && eligible(r, id) && !r.marked.aged.has(id));
    for (const id of report.aged) r.events.push({ type: 'pattern.aged', pattern: id, issue: input.issue, run: input.run });
  }
}

export function feedbackSummary(r: FeedbackReport): string {
  if (r.gate === 'no-verdict') return 'no valid verdict-json block: nothing to do';
  const would = r.dryRun ? 'would be ' : '';
  const ids = (list: string[]) => (list.length ? ` (${list.map(shortId).join(' ')})` : '');
  const gate = {
    reinforced: `PASS (${r.evidence})`,
    'evidence-too-weak': `PASS without L1/L2 evidence (${r.evidence ?? 'no adversarial text'}): nothing reinforced`,
    'not-a-pass': 'FAIL',
    'no-verdict': '',
  }[r.gate];
  const confirmed = r.confirmed.map(
    (c) => `${c.finding}→${c.patterns.map(shortId).join('+')}${c.reinforced ? '' : ' (evidence too weak)'}`,
  );
  const byReason = (p: Penalty) => (p.match === 'reason' ? ' by the reason' : '');
  const penalised = r.penalised.map((p) => `${p.finding}→${shortId(p.pattern)}${byReason(p)}`);
  return [
    `${gate}:`,
    `${r.penalised.length} ${would}penalised${penalised.length ? ` (${penalised.join(' ')})` : ''},`,
    `${r.confirmed.length} confirmed${confirmed.length ? ` (${confirmed.join(' ')})` : ''},`,
    `${r.reinforced.length} ${would}reinforced${ids(r.reinforced)},`,
    `${r.aged.length} ${would}aged${ids(r.aged)},`,
    `${r.unmatched.length} unmatched${r.unmatched.length ? ` (${r.unmatched.map((u) => u.finding).join(' ')})` : ''}` +
      (r.alreadyDismissed.length ? `, ${r.alreadyDismissed.length} already penalised in this run${ids(r.alreadyDismissed)}` : '') +
      `${r.deprecated.length ? `, ${r.deprecated.length} ${would}deprecated${ids(r.deprecated)}` : ''}`,
  ].join(' ');
}
