import type { Database } from '../store/db.js';
import type { CairnEvent } from './types.js';
import { DAY_MS } from '../core/clock.js';
import { indexTerms } from '../core/text.js';
import { idBits } from '../core/ids.js';
import { aging, withTested, type Evidence, type Tested } from './credit.js';

// The one reducer, for live writes and rebuilds alike: replaying the log reproduces the live state (SPEC §3.2).

const CONTEXT_CAP = 24; // per learned list of a pattern

type Statements = ReturnType<typeof prepareStatements>;
const cache = new WeakMap<Database, Statements>();

function prepareStatements(db: Database) {
  return {
    getPattern: db.prepare('SELECT lifecycle, sightings, labels, files, phases, issues FROM patterns WHERE project = ? AND id = ?'),
    insertPattern: db.prepare(`INSERT INTO patterns (project, id, id_bits, role, text, ntok, category, success_count, sightings, lifecycle,
      first_seen, last_used, labels, files, phases, issues, term_seq, untested)
      VALUES (@project, @id, @id_bits, @role, @text, @ntok, @category, 1, 1, 'observed',
      @ts, @last_used, @labels, @files, @phases, @issues, @term_seq, 1)`),
    // numbered after every term row already there (seq: lib/store/db.ts)
    insertTerms: db.prepare(`INSERT OR IGNORE INTO pattern_terms (project, role, term, pattern, seq, ntok)
      SELECT @project, @role, value, @pattern, @seq, @ntok FROM json_each(@terms)`),
    nextTermSeq: db.prepare('SELECT IFNULL(MAX(rowid), 0) + 1 AS seq FROM pattern_terms'),
    // a sighting is untested credit (SPEC §3.10.1)
    seenAgain: db.prepare(`UPDATE patterns SET success_count = success_count + 1, untested = untested + 1, sightings = sightings + 1,
      last_used = @last_used, lifecycle = @lifecycle, labels = @labels, files = @files, phases = @phases, issues = @issues
      WHERE project = @project AND id = @id`),
    touch: db.prepare('UPDATE patterns SET last_used = ? WHERE project = ? AND id = ?'),
    insertSighting: db.prepare(`INSERT INTO sightings (project, issue, run, role, pattern, deliberation, added_success)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    retractSighting: db.prepare(`UPDATE sightings SET retracted = 1 WHERE rowid = (SELECT rowid FROM sightings
      WHERE project = ? AND issue = ? AND run = ? AND pattern = ? AND added_success = 1 AND retracted = 0 LIMIT 1)`),
    // its touches stay one per pattern (docs/decisions.md)
    insertInjections: db.prepare(`INSERT INTO injections (project, issue, run, role, pattern, event, ts)
      SELECT @project, @issue, @run, @role, value, @event, @ts FROM json_each(@patterns)`),
    evidence: db.prepare('SELECT held, ignore_weight, untested FROM patterns WHERE project = ? AND id = ?'),
    insertEvidence: db.prepare('INSERT INTO evidence (project, pattern, event, held, against, aging) VALUES (?, ?, ?, ?, ?, ?)'),
    // a retracted sighting was no success and counts towards no lifecycle (SPEC §3.7, §3.9)
    ignore: db.prepare(`UPDATE patterns SET ignore_count = ignore_count + 1, ignore_weight = @ignore_weight, held = @held,
      success_count = MAX(0, success_count - @retract), untested = MAX(0, untested - @retract), sightings = MAX(0, sightings - @retract)
      WHERE project = @project AND id = @id`),
    insertDismissal: db.prepare('INSERT OR IGNORE INTO dismissals (project, issue, run, pattern, finding) VALUES (?, ?, ?, ?, ?)'),
    markRun: db.prepare('INSERT OR IGNORE INTO run_marks (project, issue, run, pattern, kind) VALUES (?, ?, ?, ?, ?)'),
    outcomeGrading: db.prepare('SELECT grading FROM outcomes WHERE project = ? AND issue = ? AND run = ?'),
    regress: db.prepare('UPDATE patterns SET regressed = 1 WHERE project = ? AND id = ?'),
    reinforceTested: db.prepare(`UPDATE patterns SET success_count = success_count + 1, reinforcement_count = reinforcement_count + 1,
      was_validated = 1, last_used = @last_used, held = @held, ignore_weight = @ignore_weight WHERE project = @project AND id = @id`),
    reinforceUntested: db.prepare(`UPDATE patterns SET success_count = success_count + 1, untested = untested + 1, last_used = @last_used
      WHERE project = @project AND id = @id`),
    age: db.prepare(`UPDATE patterns SET last_used = last_used - ${DAY_MS}
      WHERE project = ? AND id = ? AND reinforcement_count < 3 AND lifecycle != 'active'`),
    outcomeUntested: db.prepare(`UPDATE patterns SET success_count = success_count + @success, untested = MAX(0, untested + @step)
      WHERE project = @project AND id = @id`),
    outcomeTested: db.prepare(`UPDATE patterns SET success_count = success_count + @success, held = @held, ignore_weight = @ignore_weight
      WHERE project = @project AND id = @id`),
    insertOutcome: db.prepare('INSERT OR IGNORE INTO outcomes (project, issue, run, result, ts, grading) VALUES (?, ?, ?, ?, ?, ?)'),
    setLifecycle: db.prepare('UPDATE patterns SET lifecycle = ?, promoted_by = ?, reason = ? WHERE project = ? AND id = ?'),
    insertDeliberation:
      db.prepare(`INSERT OR REPLACE INTO deliberations (project, id, ts, role, issue, run, phase, iteration, labels, files,
      verdict, evidence, text_hash, size, path, duplicate_of)
      VALUES (@project, @id, @ts, @role, @issue, @run, @phase, @iteration, @labels, @files,
      @verdict, @evidence, @hash, @size, @path, @duplicate_of)`),
    sameText: db.prepare(`SELECT id FROM deliberations WHERE project = ? AND role = ? AND issue = ? AND run = ? AND text_hash = ?
      AND duplicate_of IS NULL AND id != ? LIMIT 1`),
    duplicateOf: db.prepare('SELECT duplicate_of FROM deliberations WHERE project = ? AND id = ?'),
    insertLink: db.prepare(`INSERT OR IGNORE INTO links (project, deliberation, issue, run, role, finding, pattern, match, summary)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    upsertSummary: db.prepare(`INSERT INTO summaries (project, role, basis, text, ts, newest) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (project, role) DO UPDATE SET basis = excluded.basis, text = excluded.text, ts = excluded.ts, newest = excluded.newest`),
  };
}

function statements(db: Database): Statements {
  let s = cache.get(db);
  if (!s) {
    s = prepareStatements(db);
    cache.set(db, s);
  }
  return s;
}

/** The one writer of pattern_terms. Returns the row's term_seq (0: no terms): readers find postings by it. */
export function addTerms(db: Database, project: string, role: string, pattern: string, terms: string[], ntok: number): number {
  if (terms.length === 0) return 0;
  const s = statements(db);
  const seq = (s.nextTermSeq.get() as { seq: number }).seq;
  s.insertTerms.run({ project, role, pattern, seq, ntok, terms: JSON.stringify(terms) });
  return seq;
}

interface PatternRow {
  lifecycle: string;
  sightings: number;
  labels: string;
  files: string;
  phases: string;
  issues: string;
}

/** Oldest kept first, capped. */
function extend(json: string, add: (string | null | undefined)[]): string {
  if (add.every((v) => !v || listed(json, v))) return json; // a re-sighting mostly adds nothing
  const list: string[] = JSON.parse(json);
  const before = list.length;
  for (const v of add) if (v && !list.includes(v) && list.length < CONTEXT_CAP) list.push(v);
  return list.length === before ? json : JSON.stringify(list);
}

/** Told from the text unparsed (a replay asks once per event) where that is safe; else false and the caller parses. */
export function listed(json: string, value: string): boolean {
  return !json.includes('\\') && !/["\\\u0000-\u001f]|^[,\]]/.test(value) && json.includes(`"${value}"`);
}

/** Automatic lifecycle moves only go up, and never past verified (SPEC §3.3). */
export function nextLifecycle(current: string, sightings: number, distinctIssues: number): string {
  if (current !== 'observed' && current !== 'candidate') return current;
  if (sightings >= 3 && distinctIssues >= 2) return 'verified';
  if (sightings >= 2) return 'candidate';
  return current;
}

/** Its events follow one another. */
const lastAsked = new WeakMap<Statements, { project: string; deliberation: string; duplicate: boolean }>();

/** A repeat of one stored for its issue/run: its events change nothing. */
function isDuplicate(s: Statements, project: string, deliberation: string): boolean {
  const last = lastAsked.get(s);
  if (last && last.deliberation === deliberation && last.project === project) return last.duplicate;
  const row = s.duplicateOf.get(project, deliberation) as { duplicate_of: string | null } | undefined;
  const duplicate = !!row?.duplicate_of;
  lastAsked.set(s, { project, deliberation, duplicate });
  return duplicate;
}

function testEvidence(
  s: Statements,
  e: CairnEvent,
  pattern: string,
  t: Tested,
  write: (after: { held: number; ignore_weight: number }) => void,
): void {
  const before = s.evidence.get(e.project, pattern) as Evidence | undefined;
  if (!before) return;
  const { held, ignore_weight } = withTested(before, t);
  write({ held, ignore_weight });
  s.insertEvidence.run(e.project, pattern, e.id, t.held ?? 0, t.against ?? 0, aging(t.strength, t.halfLife));
}

export function applyEvent(db: Database, e: CairnEvent): void {
  const s = statements(db);
  const ms = Date.parse(e.ts);
  const issue = 'issue' in e ? (e.issue ?? '') : '';
  const run = 'run' in e ? (e.run ?? '') : '';
  switch (e.type) {
    case 'deliberation.stored': {
      lastAsked.delete(s);
      // a retry is not evidence (SPEC §3.9.4): the same text, role and issue/run counts once, the first in replay order
      const first =
        issue || run ? (s.sameText.get(e.project, e.role, issue, run, e.hash, e.deliberation) as { id: string } | undefined) : undefined;
      s.insertDeliberation.run({
        project: e.project,
        id: e.deliberation,
        ts: e.ts,
        role: e.role,
        issue,
        run,
        phase: e.phase ?? null,
        iteration: e.iteration ?? null,
        labels: JSON.stringify(e.labels ?? []),
        files: JSON.stringify(e.files ?? []),
        verdict: e.verdict ? JSON.stringify(e.verdict) : null,
        evidence: e.evidence,
        hash: e.hash,
        size: e.size,
        path: e.path,
        duplicate_of: first?.id ?? null,
      });
      return;
    }
    case 'finding.linked':
      if (isDuplicate(s, e.project, e.deliberation)) return;
      for (const pattern of e.patterns)
        s.insertLink.run(e.project, e.deliberation, issue, run, e.role, e.finding, pattern, e.match, e.summary);
      return;
    case 'pattern.observed': {
      if (isDuplicate(s, e.project, e.deliberation)) return;
      const row = s.getPattern.get(e.project, e.pattern) as PatternRow | undefined;
      if (!row) {
        const { terms, length } = indexTerms(e.text);
        const seq = addTerms(db, e.project, e.role, e.pattern, terms, length);
        s.insertPattern.run({
          project: e.project,
          id: e.pattern,
          id_bits: idBits(e.pattern),
          role: e.role,
          text: e.text,
          ntok: length,
          category: e.category,
          ts: e.ts,
          last_used: ms,
          labels: extend('[]', e.labels ?? []),
          files: extend('[]', e.files ?? []),
          phases: extend('[]', [e.phase]),
          issues: extend('[]', [e.issue]),
          term_seq: seq,
        });
        s.insertSighting.run(e.project, issue, run, e.role, e.pattern, e.deliberation, 1);
        return;
      }
      if (e.echo) {
        // an injected pattern coming back in its run is no new evidence (SPEC §3.3)
        s.touch.run(ms, e.project, e.pattern);
        s.insertSighting.run(e.project, issue, run, e.role, e.pattern, e.deliberation, 0);
        return;
      }
      const issues = extend(row.issues, [e.issue]);
      s.seenAgain.run({
        project: e.project,
        id: e.pattern,
        last_used: ms,
        lifecycle: nextLifecycle(row.lifecycle, row.sightings + 1, JSON.parse(issues).length),
        labels: extend(row.labels, e.labels ?? []),
        files: extend(row.files, e.files ?? []),
        phases: extend(row.phases, [e.phase]),
        issues,
      });
      s.insertSighting.run(e.project, issue, run, e.role, e.pattern, e.deliberation, 1);
      return;
    }
    case 'pattern.injected':
      for (const id of e.patterns) s.touch.run(ms, e.project, id);
      s.insertInjections.run({
        project: e.project,
        issue,
        run,
        role: e.role,
        event: e.id,
        ts: e.ts,
        patterns: JSON.stringify(e.patterns),
      });
      return;
    case 'pattern.ignored':
      // racing writers or a merged log: the first dismissal in a run counts
      if ((issue || run) && s.insertDismissal.run(e.project, issue, run, e.pattern, e.finding).changes === 0) return;
      testEvidence(s, e, e.pattern, { against: e.weight, strength: 1, halfLife: e.halfLife }, (after) =>
        s.ignore.run({ project: e.project, id: e.pattern, ...after, retract: e.retract ? 1 : 0 }),
      );
      if (e.retract) s.retractSighting.run(e.project, issue, run, e.pattern);
      return;
    case 'pattern.regressed':
      s.regress.run(e.project, e.pattern);
      return;
    case 'pattern.reinforced':
      // one validation per run: a re-run or a merged copy does not count again
      if ((issue || run) && s.markRun.run(e.project, issue, run, e.pattern, 'reinforced').changes === 0) return;
      if (!e.finding) s.reinforceUntested.run({ last_used: ms, project: e.project, id: e.pattern });
      else {
        // judged in this run: the run's outcome leaves it to that verdict (lib/patterns/outcome.ts)
        if (issue || run) s.markRun.run(e.project, issue, run, e.pattern, 'judged');
        testEvidence(s, e, e.pattern, { held: 1, strength: 1, halfLife: e.halfLife }, (after) =>
          s.reinforceTested.run({ last_used: ms, project: e.project, id: e.pattern, ...after }),
        );
      }
      return;
    case 'pattern.aged':
      if ((issue || run) && s.markRun.run(e.project, issue, run, e.pattern, 'aged').changes === 0) return;
      s.age.run(e.project, e.pattern);
      return;
    case 'pattern.outcome': {
      // graded once per issue/run: a repeat (racing writers, a merge) does not count
      const grading = e.grading ?? e.id;
      const prior = s.outcomeGrading.get(e.project, issue, run) as { grading: string } | undefined;
      if (prior && prior.grading !== grading) return;
      if (!prior) s.insertOutcome.run(e.project, issue, run, e.result, e.ts, grading);
      for (const p of e.patterns) {
        const pass = e.result === 'pass';
        if (pass ? !p.credit : p.tested === false)
          s.outcomeUntested.run({ project: e.project, id: p.pattern, success: pass ? 1 : 0, step: pass ? 1 : -1 });
        else {
          // a pass counts its credit; a fail weighs half the role's weight (SPEC §3.8)
          const t = e.result === 'pass' ? { held: p.credit, strength: p.credit! } : { against: 0.5 * p.weight, strength: 0.5 };
          testEvidence(s, e, p.pattern, { ...t, halfLife: e.halfLife }, (after) =>
            s.outcomeTested.run({ project: e.project, id: p.pattern, success: e.result === 'pass' ? 1 : 0, ...after }),
          );
        }
      }
      return;
    }
    case 'pattern.promoted':
      s.setLifecycle.run('active', e.by, e.reason, e.project, e.pattern);
      return;
    case 'pattern.deprecated':
      s.setLifecycle.run('deprecated', null, e.reason, e.project, e.pattern);
      return;
    case 'summary.stored':
      s.upsertSummary.run(e.project, e.role, e.basis, e.text, e.ts, e.newest ?? null);
      return;
    default:
      // landing.captured and future types stay in the log untouched
      return;
  }
}
