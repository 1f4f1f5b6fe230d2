// Every change to pattern state is one of these events (SPEC §3.2); payload fields sit beside the envelope.

export interface Envelope {
  v: 1;
  id: string;
  ts: string;
  type: string;
  project: string;
}

export type Scope = { issue: string | null; run: string | null };

export interface VerdictDigest {
  verdict: 'PASS' | 'FAIL';
  effective: 'PASS' | 'FAIL';
  must_fix: string[];
  false_positives: string[];
  findings: string[];
}

export type EventPayload =
  | ({
      type: 'deliberation.stored';
      deliberation: string;
      role: string;
      phase: string | null;
      iteration: number | null;
      labels: string[];
      files: string[];
      verdict: VerdictDigest | null;
      evidence: 'L1' | 'L2' | 'L3';
      hash: string;
      size: number;
      path: string;
    } & Scope)
  | ({
      type: 'pattern.observed';
      pattern: string;
      role: string;
      text: string;
      category: Category;
      phase: string | null;
      labels: string[];
      files: string[];
      deliberation: string;
      echo?: true;
    } & Scope)
  | ({ type: 'pattern.injected'; role: string; patterns: string[]; path: string; tokens: number } & Scope)
  // so replay never re-runs the matcher (SPEC §3.9.1)
  | ({
      type: 'finding.linked';
      deliberation: string;
      role: string;
      finding: string;
      summary: string;
      patterns: string[];
      match: 'explicit' | 'text' | 'embedding' | 'self';
    } & Scope)
  // reason: the validator's words that led here; halfLife (here and below): the writer's config, so replay needs none
  | ({
      type: 'pattern.ignored';
      pattern: string;
      role: string;
      weight: number;
      finding: string;
      retract: boolean;
      reason?: string;
      halfLife?: number;
    } & Scope)
  | ({ type: 'pattern.regressed'; pattern: string; finding: string } & Scope)
  // without `finding`: a PASS it was only echoed in, untested credit (SPEC §3.10.1)
  | ({ type: 'pattern.reinforced'; pattern: string; finding?: string; halfLife?: number } & Scope)
  | ({ type: 'pattern.aged'; pattern: string } & Scope)
  // one grading may span several events, so each line stays small; tested absent: a fail counts as tested
  | ({
      type: 'pattern.outcome';
      result: 'pass' | 'fail';
      grading?: string;
      patterns: { pattern: string; weight: number; tested?: boolean; credit?: number }[];
      halfLife?: number;
    } & Scope)
  | { type: 'pattern.promoted'; pattern: string; by: string; reason: string }
  | { type: 'pattern.deprecated'; pattern: string; reason: string; auto: boolean }
  // newest: the latest first sighting among the candidates when the basis was taken
  | { type: 'summary.stored'; role: string; basis: string; text: string; newest?: string }
  // the landing itself is in landings.jsonl (SPEC §5)
  | ({ type: 'landing.captured'; landing: string; title: string; report: string | null; merged: boolean } & Scope);

export type Category = 'rule' | 'causal' | 'observation';
export type CairnEvent = Envelope & EventPayload;

export function envelopeProblem(value: Record<string, unknown>): string | undefined {
  if (value.v !== 1) return `unsupported event version ${JSON.stringify(value.v)}`;
  for (const key of ['id', 'ts', 'type', 'project'] as const) {
    if (typeof value[key] !== 'string' || value[key] === '') return `missing ${key}`;
  }
  if (Number.isNaN(Date.parse(value.ts as string))) return 'unreadable ts';
  return undefined;
}

// A line carrying more is skipped (SPEC §3.2, §3.3): a forged or foreign line must not break or slow every command.
export const MAX_PATTERN_CHARS = 500;
export const MAX_ROLE_CHARS = 64;
export const MAX_SCOPE_CHARS = 128; // issue, run, phase, finding ids
export const MAX_FINDING_SUMMARY_CHARS = 160;
const MAX_LIST_ITEMS = 100; // ids in one event's list
export const MAX_SUMMARY_BYTES = 3000; // a stored summary (summary.stored)

export function payloadProblem(e: Record<string, unknown>): string | undefined {
  const text = (key: string, max: number, optional = false) => {
    const v = e[key];
    if (v === undefined || v === null) return optional ? undefined : `missing ${key}`;
    if (typeof v !== 'string') return `${key} is not a string`;
    return v.length > max ? `${key} longer than ${max} characters` : undefined;
  };
  const ids = (key: string) => {
    const v = e[key];
    if (!Array.isArray(v)) return `${key} is not a list`;
    if (v.length > MAX_LIST_ITEMS) return `${key} has more than ${MAX_LIST_ITEMS} entries`;
    return v.every((x) => typeof x === 'string' && x.length <= MAX_SCOPE_CHARS)
      ? undefined
      : `${key} holds a value that is not a short string`;
  };
  const context = (key: string) => {
    const v = e[key];
    if (v === undefined) return undefined;
    return Array.isArray(v) && v.length <= MAX_LIST_ITEMS && v.every((x) => typeof x === 'string' && x.length <= 300)
      ? undefined
      : `${key} is not a short list of strings`;
  };
  const halfLife =
    e.halfLife === undefined || (typeof e.halfLife === 'number' && e.halfLife > 0 && e.halfLife <= 1000)
      ? undefined
      : 'halfLife is not a number in (0, 1000]';
  const checks: (string | undefined)[] = [
    text('issue', MAX_SCOPE_CHARS, true),
    text('run', MAX_SCOPE_CHARS, true),
    context('labels'),
    context('files'),
    halfLife,
  ];
  switch (e.type) {
    case 'deliberation.stored':
      checks.push(
        text('deliberation', MAX_SCOPE_CHARS),
        text('role', MAX_ROLE_CHARS),
        text('hash', 64),
        text('phase', MAX_SCOPE_CHARS, true),
      );
      break;
    case 'pattern.observed':
      checks.push(
        text('pattern', 32),
        text('role', MAX_ROLE_CHARS),
        text('text', MAX_PATTERN_CHARS),
        text('deliberation', MAX_SCOPE_CHARS),
        text('phase', MAX_SCOPE_CHARS, true),
      );
      break;
    case 'pattern.injected':
      checks.push(text('role', MAX_ROLE_CHARS), ids('patterns'));
      break;
    case 'finding.linked':
      checks.push(
        text('deliberation', MAX_SCOPE_CHARS),
        text('role', MAX_ROLE_CHARS),
        text('finding', MAX_SCOPE_CHARS),
        text('summary', MAX_FINDING_SUMMARY_CHARS),
        ids('patterns'),
      );
      break;
    case 'pattern.ignored':
      checks.push(
        text('pattern', 32),
        text('role', MAX_ROLE_CHARS),
        text('finding', MAX_SCOPE_CHARS),
        text('reason', MAX_FINDING_SUMMARY_CHARS, true),
        typeof e.weight === 'number' && Number.isFinite(e.weight) && e.weight >= 0 && e.weight <= 100
          ? undefined
          : 'weight is not a number in 0..100',
      );
      break;
    case 'pattern.regressed':
    case 'pattern.aged':
    case 'pattern.promoted':
    case 'pattern.deprecated':
      checks.push(text('pattern', 32));
      break;
    case 'pattern.reinforced':
      checks.push(text('pattern', 32), text('finding', MAX_SCOPE_CHARS, true));
      break;
    case 'pattern.outcome':
      checks.push(
        e.result === 'pass' || e.result === 'fail' ? undefined : 'result is neither pass nor fail',
        Array.isArray(e.patterns) &&
          e.patterns.length <= MAX_LIST_ITEMS &&
          e.patterns.every(
            (p) =>
              p &&
              typeof p === 'object' &&
              typeof p.pattern === 'string' &&
              p.pattern.length <= 32 &&
              typeof p.weight === 'number' &&
              Number.isFinite(p.weight) &&
              (p.credit === undefined || (typeof p.credit === 'number' && p.credit >= 0 && p.credit <= 1)) &&
              (p.tested === undefined || typeof p.tested === 'boolean'),
          )
          ? undefined
          : 'patterns is not a short list of {pattern, weight, tested?, credit?}',
      );
      break;
    case 'summary.stored':
      checks.push(text('role', MAX_ROLE_CHARS), text('basis', 64), text('text', MAX_SUMMARY_BYTES), text('newest', 40, true));
      break;
  }
  return checks.find((c) => c !== undefined);
}

/** Replay order. ISO timestamps of one width compare as strings. */
export function eventKey(e: { ts: string; id: string }): string {
  return `${e.ts}|${e.id}`;
}
