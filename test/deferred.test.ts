import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  asIfApplyingKeptRuns,
  fixturePath,
  fixtureText,
  indexedBenchStore,
  projectCopy,
  removeProject,
  run,
  runAsync,
  tempProject,
} from './helpers.js';
// @ts-expect-error: the benchmark's store writer is plain JavaScript (it writes cairn's event format directly)
import { PROJECT } from '../bench/stores.js';

// Writes that arrive while the index catches up with its log (a fresh clone's first hooks) are kept
// and applied later, in the order they came (lib/store/deferred.ts): nothing a pipeline step was
// given is lost, and no step runs ahead of the ones before it.

const NOW = '2026-03-02T10:00:00.000Z';
let indexed: string;

beforeAll(() => {
  indexed = indexedBenchStore('cairn-deferred-', NOW);
});

afterAll(() => removeProject(indexed));

/** A copy of the big project; without its index it is a fresh clone. */
function bigProject(withIndex: boolean): string {
  return projectCopy(indexed, withIndex);
}

const scope = ['--issue', 'LED-101', '--run', 'r1', '--project', PROJECT];
/** One pipeline run's writers, in order, as an orchestrator calls them. */
const STEPS: { name: string; args: string[]; input?: string }[] = [
  {
    name: 'store-deliberation',
    args: ['--role', 'auditor', '--phase', 'plan', ...scope],
    input: fixtureText('led-101-r1-plan-auditor.md'),
  },
  {
    name: 'store-deliberation',
    args: ['--role', 'curator', '--phase', 'plan', ...scope],
    input: fixtureText('led-101-r1-plan-curator.md'),
  },
  { name: 'feedback-loop', args: ['--adversarial-role', 'auditor', '--validator-role', 'curator', ...scope] },
  { name: 'outcome-score', args: ['--result', 'pass', ...scope] },
];

const logLines = (root: string) =>
  readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
const deferredDir = (root: string) => join(root, '.cairn', 'cache', 'deferred');
const waiting = (root: string) => (existsSync(deferredDir(root)) ? readdirSync(deferredDir(root)).sort() : []);
/** What the run's events did, without their ids and times and what digests them (two stores give the same run different ones). */
const effects = (lines: string[]) =>
  lines.map((l) => {
    const { id: _id, ts: _ts, deliberation: _d, path: _p, grading: _g, ...rest } = JSON.parse(l) as Record<string, unknown>;
    return JSON.stringify(rest);
  });

/**
 * Stands for a background `cairn rebuild --continue` applying kept runs, so that the writers start
 * none and this test applies the kept runs itself, at a point it chooses (after letting it go).
 */
const drainerRunning = (root: string) => asIfApplyingKeptRuns(root);

describe('writes while a fresh clone catches up', () => {
  it('are kept, in order, and applied by cairn rebuild --continue as if they had run on a current index', () => {
    const clone = bigProject(false);
    const before = logLines(clone);
    mkdirSync(join(clone, '.cairn', 'cache'), { recursive: true });
    const letGo = drainerRunning(clone);
    for (const [i, step] of STEPS.entries()) {
      // the first step has too little time to catch up; the others find it waiting and queue behind it
      const env = { CAIRN_NOW: NOW, ...(i === 0 && { CAIRN_DEADLINE_MS: '300' }) };
      const r = run(step.name, [...step.args, '--json', '--strict'], { cwd: clone, input: step.input, env });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ deferred: expect.stringMatching(/^\d{15}-[0-9a-f]{8}\.json$/) });
      expect(r.stderr).toMatch(
        i === 0
          ? /deadline passed while indexing events .*this run is kept/
          : /earlier run\(s\) kept for later are not applied yet: this run is kept/,
      );
      expect(waiting(clone)).toHaveLength(i + 1);
    }
    expect(logLines(clone)).toEqual(before); // nothing applied yet, nothing lost
    const doctor = () =>
      (
        JSON.parse(run('cairn', ['doctor', '--json', '--project', PROJECT], { cwd: clone, env: { CAIRN_NOW: NOW } }).stdout) as {
          checks: { name: string; status: string; detail: string }[];
        }
      ).checks.find((c) => c.name === 'deferred writes');
    expect(doctor()).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^4 waiting since .*: a background cairn rebuild --continue applies them$/),
    });

    letGo();
    const drained = run('cairn', ['rebuild', '--continue', '--project', PROJECT, '--strict', '--json'], {
      cwd: clone,
      env: { CAIRN_NOW: NOW },
    });
    expect(drained.code, drained.stderr).toBe(0);
    expect(JSON.parse(drained.stdout).deferred).toBe(STEPS.length);
    expect(waiting(clone)).toEqual([]);
    expect(doctor()).toMatchObject({ status: 'ok', detail: 'none waiting' });

    // the same steps on a current index, as they would have run without the clone's catch-up
    const current = bigProject(true);
    const start = logLines(current).length;
    for (const step of STEPS)
      expect(run(step.name, [...step.args, '--strict'], { cwd: current, input: step.input, env: { CAIRN_NOW: NOW } }).code).toBe(0);
    const expected = effects(logLines(current).slice(start));
    expect(expected.some((e) => e.includes('"type":"pattern.outcome"'))).toBe(true); // the whole run took effect
    expect(effects(logLines(clone).slice(before.length))).toEqual(expected);
  });

  it('a kept run is applied once, also when run again (a writer that retries after a failure)', () => {
    const clone = bigProject(false);
    mkdirSync(join(clone, '.cairn', 'cache'), { recursive: true });
    const letGo = drainerRunning(clone);
    const step = STEPS[0];
    const stored = () => logLines(clone).filter((l) => l.includes('"type":"deliberation.stored"')).length;
    const storedBefore = stored();
    const r = run(step.name, [...step.args, '--strict'], {
      cwd: clone,
      input: step.input,
      env: { CAIRN_NOW: NOW, CAIRN_DEADLINE_MS: '300' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(waiting(clone)).toHaveLength(1);
    letGo();
    expect(run('cairn', ['rebuild', '--continue', '--project', PROJECT, '--strict'], { cwd: clone, env: { CAIRN_NOW: NOW } }).code).toBe(0);
    expect(stored()).toBe(storedBefore + 1);
    // the same text stored again for the same issue/run changes nothing (SPEC §3.9.4)
    expect(run(step.name, [...step.args, '--strict'], { cwd: clone, input: step.input, env: { CAIRN_NOW: NOW } }).code).toBe(0);
    expect(stored()).toBe(storedBefore + 1);
  });

  it('the file a run read is kept with it: the run applies even when the file is gone by then', () => {
    const clone = bigProject(false);
    mkdirSync(join(clone, '.cairn', 'cache'), { recursive: true });
    const letGo = drainerRunning(clone);
    const file = join(clone, 'auditor.md');
    cpSync(fixturePath('led-101-r1-plan-auditor.md'), file);
    const r = run('store-deliberation', ['--role', 'auditor', ...scope, '--file', 'auditor.md', '--strict'], {
      cwd: clone,
      env: { CAIRN_NOW: NOW, CAIRN_DEADLINE_MS: '300' },
    });
    expect(r.code, r.stderr).toBe(0);
    rmSync(file);
    letGo();
    const drained = run('cairn', ['rebuild', '--continue', '--project', PROJECT, '--strict', '--json'], {
      cwd: clone,
      env: { CAIRN_NOW: NOW },
    });
    expect(JSON.parse(drained.stdout).deferred).toBe(1);
    const artifacts = readdirSync(join(clone, '.cairn', 'artifacts', 'deliberations'));
    const texts = artifacts.map((a) => readFileSync(join(clone, '.cairn', 'artifacts', 'deliberations', a), 'utf8'));
    expect(texts).toContain(fixtureText('led-101-r1-plan-auditor.md'));
  });

  it('a request a dead run had taken is run again once stale; an unreadable one is set aside, never run', () => {
    const root = tempProject();
    const dir = deferredDir(root);
    mkdirSync(dir, { recursive: true });
    const request = {
      command: 'store-deliberation',
      argv: ['--role', 'auditor', ...scope],
      cwd: root,
      inputs: { stdin: fixtureText('led-101-r1-plan-auditor.md') },
    };
    const taken = join(dir, `${String(Date.now() - 3_600_000).padStart(15, '0')}-0badc0de.4242.taken`);
    writeFileSync(taken, JSON.stringify(request));
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(taken, hourAgo, hourAgo);
    writeFileSync(join(dir, `${String(Date.now()).padStart(15, '0')}-00000000.json`), '{"command": "store-deli');
    const r = run('cairn', ['rebuild', '--continue', '--project', PROJECT, '--json'], {
      cwd: root,
      env: { CAIRN_NOW: NOW },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).deferred).toBe(1);
    expect(r.stderr).toMatch(/cannot read the deferred request .*-00000000\.\d+\.taken/);
    expect(waiting(root)).toEqual([expect.stringMatching(/-00000000\.unreadable$/)]);
    const doctor = JSON.parse(run('cairn', ['doctor', '--json'], { cwd: root, env: { CAIRN_NOW: NOW } }).stdout) as {
      checks: { name: string; status: string; detail: string }[];
    };
    expect(doctor.checks.find((c) => c.name === 'deferred writes')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^1 kept run\(s\) could not be read and were set aside/),
    });
    expect(logLines(root).filter((l) => l.includes('"type":"deliberation.stored"'))).toHaveLength(1);
  });

  it('a preview (--dry-run) is never kept: it fails open as before, and leaves nothing to apply', () => {
    const clone = bigProject(false);
    mkdirSync(join(clone, '.cairn', 'cache'), { recursive: true });
    drainerRunning(clone);
    const r = run('outcome-score', ['--result', 'pass', ...scope, '--dry-run'], {
      cwd: clone,
      env: { CAIRN_NOW: NOW, CAIRN_DEADLINE_MS: '300' },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^cairn outcome-score: skipped \(pipeline continues\): deadline passed while indexing events/);
    expect(waiting(clone)).toEqual([]);
  });

  it('only a writer runs a kept request: another command given one refuses, and does nothing', () => {
    const root = tempProject();
    const path = join(root, 'request.json');
    writeFileSync(path, JSON.stringify({ command: 'deprecate', argv: [], cwd: root, inputs: {} }));
    const r = run('cairn', ['deprecate', 'p0123456789abcdef', '--strict'], {
      cwd: root,
      env: { CAIRN_NOW: NOW, CAIRN_DEFERRED: path },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/deprecate is not a command whose runs are kept for later/);
    expect(existsSync(join(root, '.cairn', 'events.jsonl'))).toBe(false);
  });

  it('runs kept by writers at once are applied exactly once, by two cairn rebuild --continue at once', async () => {
    const clone = bigProject(false);
    mkdirSync(join(clone, '.cairn', 'cache'), { recursive: true });
    const letGo = drainerRunning(clone);
    const before = logLines(clone).length;
    const issues = ['LED-201', 'LED-202', 'LED-203', 'LED-204'];
    const kept = await Promise.all(
      issues.map((issue) =>
        runAsync('store-deliberation', ['--role', 'auditor', '--issue', issue, '--run', 'r1', '--project', PROJECT, '--strict'], {
          cwd: clone,
          input: fixtureText('led-101-r1-plan-auditor.md'),
          env: { CAIRN_NOW: NOW, CAIRN_DEADLINE_MS: '300' },
        }),
      ),
    );
    for (const r of kept) expect(r.code, r.stderr).toBe(0);
    letGo();
    const drains = await Promise.all(
      [0, 1].map(() =>
        runAsync('cairn', ['rebuild', '--continue', '--project', PROJECT, '--strict', '--json'], {
          cwd: clone,
          env: { CAIRN_NOW: NOW },
        }),
      ),
    );
    for (const d of drains) expect(d.code, d.stderr).toBe(0);
    const ran = drains.reduce((sum, d) => sum + (JSON.parse(d.stdout) as { deferred: number }).deferred, 0);
    const stored = logLines(clone)
      .slice(before)
      .filter((l) => l.includes('"type":"deliberation.stored"'));
    expect(stored.map((l) => (JSON.parse(l) as { issue: string }).issue).sort()).toEqual(issues); // each once
    expect(ran).toBe(kept.filter((r) => /this run is kept/.test(r.stderr)).length);
    expect(waiting(clone)).toEqual([]);
  });
});
