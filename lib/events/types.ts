// Every change to pattern state is one of these events (SPEC §3.2). Payload fields sit beside the
// envelope, as in `{"v":1,"id":…,"ts":…,"type":"pattern.observed","project":…,"pattern":…}`.

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
  | ({ type: 'deliberation.stored'; deliberation: string; role: string; phase: string | null; iteration: number | null; labels: string[]; files: string[]; verdict: VerdictDigest | null; evidence: 'L1' | 'L2' | 'L3'; hash: string; size: number; path: string } & Scope)
  | ({ type: 'pattern.observed'; pattern: string; role: string; text: string; category: Category; phase: string | null; labels: string[]; files: string[]; deliberation: string; echo?: true } & Scope)
  | ({ type: 'pattern.injected'; role: string; patterns: string[]; path: string; tokens: number } & Scope)
  | ({ type: 'pattern.ignored'; pattern: string; role: string; weight: number; finding: string; retract: boolean } & Scope)
  | ({ type: 'pattern.regressed'; pattern: string; finding: string } & Scope)
  | ({ type: 'pattern.reinforced'; pattern: string } & Scope)
  | ({ type: 'pattern.aged'; pattern: string } & Scope)
  // One grading may span several events (`grading` names it) so that each line stays small.
  | ({ type: 'pattern.outcome'; result: 'pass' | 'fail'; grading?: string; patterns: { pattern: string; weight: number }[] } & Scope)
  | { type: 'pattern.promoted'; pattern: string; by: string; reason: string }
  | { type: 'pattern.deprecated'; pattern: string; reason: string; auto: boolean }
  | { type: 'summary.stored'; role: string; basis: string; text: string }
  // The library itself is .cairn/landing-patterns.json (SPEC §5); the log only notes the capture.
  | ({ type: 'landing.captured'; landing: string; title: string; report: string | null; merged: boolean } & Scope);

export type Category = 'rule' | 'causal' | 'observation';
export type EventType = EventPayload['type'];
export type CairnEvent = Envelope & EventPayload;

export const EVENT_TYPES: readonly string[] = [
  'deliberation.stored',
  'pattern.observed',
  'pattern.injected',
  'pattern.ignored',
  'pattern.regressed',
  'pattern.reinforced',
  'pattern.aged',
  'pattern.outcome',
  'pattern.promoted',
  'pattern.deprecated',
  'summary.stored',
  'landing.captured',
];

/** The envelope checks a line must pass before the reducer sees it. */
export function envelopeProblem(value: Record<string, unknown>): string | undefined {
  if (value.v !== 1) return `unsupported event version ${JSON.stringify(value.v)}`;
  for (const key of ['id', 'ts', 'type', 'project'] as const) {
    if (typeof value[key] !== 'string' || value[key] === '') return `missing ${key}`;
  }
  if (Number.isNaN(Date.parse(value.ts as string))) return 'unreadable ts';
  return undefined;
}

/** Replay order: (ts, id). ISO timestamps of one width compare as strings. */
export function eventKey(e: { ts: string; id: string }): string {
  return `${e.ts}|${e.id}`;
}
