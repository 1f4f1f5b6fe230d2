import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asIfApplyingKeptRuns, fixturePath, FIXTURES, fixtureText, longDeliberation, processesIn, run, tempProject } from './helpers.js';

// Runs kept for later (lib/store/deferred.ts) are applied soon after, by a background job that has a
// deadline of its own; stderr says what really happens to them, and `cairn doctor` fails while one
// waits with nothing to apply it.

const REPORT = join(FIXTURES, 'landing', 'land-report.example.json');
const deferred = (root: string) => join(root, '.cairn', 'cache', 'deferred');
const kept = (root: string) => (existsSync(deferred(root)) ? readdirSync(deferred(root)).sort() : []);
const events = (root: string, type: string) =>
  readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"type":"${type}"`));
const doctorCheck = (root: string) => {
  const r = run('cairn', ['doctor', '--json'], { cwd: root });
  return {
    code: r.code,
    check: (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find(
      (c) => c.name === 'deferred writes',
    )!,
  };
};
/** An outcome-score whose deadline passes at once: its run is kept. */
const keptOutcome = (root: string, issue: string) =>
  run('outcome-score', ['--issue', issue, '--run', 'r1', '--result', 'pass', '--report', REPORT], {
    cwd: root,
    env: { CAIRN_DEADLINE_MS: '1' },
  });

function waitUntil(done: () => boolean, ms: number): boolean {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) return false;
    spawnSync('sleep', ['0.1']);
  }
  return true;
}

/** Each writer as a pipeline or hook calls it, with what it reads. */
const WRITERS: { name: string; args: string[]; input?: string; kept: string }[] = [
  {
    name: 'store-deliberation',
    args: ['--role', 'auditor', '--issue', 'LED-1', '--run', 'r1'],
    input: fixtureText('led-101-r1-plan-auditor.md'),
    kept: 'stdin',
  },
  {
    name: 'store-deliberation',
    args: ['--role', 'auditor', '--issue', 'LED-1', '--run', 'r1', '--file', fixturePath('led-101-r1-plan-auditor.md')],
    kept: 'file',
  },
  {
    name: 'feedback-loop',
    args: ['--adversarial-role', 'auditor', '--validator-role', 'curator', '--issue', 'LED-1', '--run', 'r1'],
    input: fixtureText('led-101-r1-plan-curator.md'),
    kept: 'stdin',
  },
  {
    name: 'outcome-score',
    args: ['--issue', 'LED-1', '--run', 'r1', '--result', 'pass', '--report', REPORT],
    kept: 'report',
  },
  {
    name: 'memory-capture',
    args: ['--bead', 'b-1', '--text', 'LEARNED: the ledger totals are computed in cents'],
    kept: '',
  },
  {
    name: 'memory-capture',
    args: [],
    input: JSON.stringify({
      ...JSON.parse(readFileSync(join(FIXTURES, 'hooks', 'claude-post-tool-use-bash.json'), 'utf8')),
      cwd: '.',
    }),
    kept: 'stdin',
  },
];

describe('kept runs', () => {
  it.each([1, 3, 5])('with a deadline of %i ms every writer keeps its run, with the input it read', (ms) => {
    const root = tempProject();
    asIfApplyingKeptRuns(root);
    for (const w of WRITERS) {
      const before = kept(root);
      const r = run(w.name, w.args, { cwd: root, input: w.input, env: { CAIRN_DEADLINE_MS: String(ms) } });
      const about = `${w.name} ${w.args.join(' ')}: ${r.stderr}`;
      expect(r.code, about).toBe(0);
      expect(r.stderr, about).toMatch(new RegExp(`^cairn ${w.name}: .*: this run is kept \\(cache/deferred/`));
      const added = kept(root).filter((n) => !before.includes(n));
      expect(added, about).toHaveLength(1);
      const request = JSON.parse(readFileSync(join(deferred(root), added[0]), 'utf8')) as {
        inputs: Record<string, string>;
      };
      if (w.kept) expect(request.inputs[w.kept], about).toBe(w.input ?? readFileSync(w.args.at(-1)!, 'utf8'));
    }
  });

  it('a run kept right after the background job applied the last one is applied too, by a job its stderr names', () => {
    const root = tempProject();
    const first = keptOutcome(root, 'LED-1');
    expect(
      waitUntil(() => kept(root).length === 0, 20_000),
      `still kept: ${kept(root)}`,
    ).toBe(true);
    // within a minute of the first job: it has finished, and this run must not wait for another writer
    const second = keptOutcome(root, 'LED-2');
    expect(
      waitUntil(() => kept(root).length === 0, 20_000),
      `stranded: ${kept(root)}`,
    ).toBe(true);
    expect(first.stderr).toMatch(
      /this run is kept \(cache\/deferred\/.*\) and applied in order by cairn rebuild --continue, started in the background \(pid \d+\)/,
    );
    expect(second.stderr).toMatch(
      /this run is kept .* started in the background \(pid \d+\)|applies kept runs now \(cache\/deferred\.lock is held by another process \(pid \d+ /,
    );
    expect(events(root, 'pattern.outcome').map((l) => JSON.parse(l).issue)).toEqual(['LED-1', 'LED-2']);
    expect(doctorCheck(root).check).toMatchObject({ status: 'ok', detail: 'none waiting' });
  });

  it('while a job applies kept runs, a writer starts none and says so; one waiting with nothing to apply it fails cairn doctor', () => {
    const root = tempProject();
    const letGo = asIfApplyingKeptRuns(root);
    const r = keptOutcome(root, 'LED-1');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `applied in order by the cairn rebuild --continue that applies kept runs now \\(cache/deferred\\.lock is held by another process \\(pid ${process.pid} `,
      ),
    );
    expect(r.stderr).not.toMatch(/started/);
    expect(processesIn(root)).toEqual([]); // none started
    expect(doctorCheck(root).check).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^1 waiting since .*: a background cairn rebuild --continue applies them$/),
    });

    // the job died without applying it, and the run was kept a while ago: nothing will apply it
    letGo();
    const [name] = kept(root);
    const old = `${String(Date.now() - 120_000).padStart(15, '0')}${name.slice(15)}`;
    renameSync(join(deferred(root), name), join(deferred(root), old));
    const stranded = doctorCheck(root);
    expect(stranded.code).toBe(1);
    expect(stranded.check).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^1 waiting since .* and nothing is applying them: run cairn rebuild --continue/),
    });

    expect(run('cairn', ['rebuild', '--continue', '--strict'], { cwd: root }).code).toBe(0);
    expect(kept(root)).toEqual([]);
    expect(doctorCheck(root).check).toMatchObject({ status: 'ok', detail: 'none waiting' });
  });

  it('a kept outcome-score records its landing once: retried by the pipeline, or run again after the job that had it died', () => {
    const root = tempProject();
    const letGo = asIfApplyingKeptRuns(root);
    expect(keptOutcome(root, 'LED-1').stderr).toMatch(/this run is kept/);
    const [name] = kept(root);
    copyFileSync(join(deferred(root), name), join(root, 'request.json'));
    letGo();
    expect(run('cairn', ['rebuild', '--continue', '--strict'], { cwd: root }).code).toBe(0);
    expect(events(root, 'landing.captured')).toHaveLength(1);

    // the job that had taken it was killed before it removed the request: the next job runs it again
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    copyFileSync(join(root, 'request.json'), join(deferred(root), `${name.replace(/\.json$/, '')}.${dead}.taken`));
    const again = run('cairn', ['rebuild', '--continue', '--strict', '--json'], { cwd: root });
    expect(JSON.parse(again.stdout).deferred).toBe(1);
    // the pipeline retries the step itself
    const retried = run('outcome-score', ['--issue', 'LED-1', '--run', 'r1', '--result', 'pass', '--report', REPORT, '--strict'], {
      cwd: root,
    });
    expect(retried.stderr).toMatch(/landing pattern already captured as lp-/);

    expect(events(root, 'landing.captured')).toHaveLength(1);
    expect(events(root, 'pattern.outcome')).toHaveLength(1);
    expect(
      readFileSync(join(root, '.cairn', 'landings.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(1);
  });

  it('a kept run too long for a background job is set aside and reported, not run again by the next job; at a terminal it applies', () => {
    const root = tempProject();
    const bytes = 2_000_000;
    writeFileSync(join(root, 'long.md'), longDeliberation(bytes));
    const letGo = asIfApplyingKeptRuns(root);
    const store = run('store-deliberation', ['--role', 'auditor', '--issue', 'LED-9', '--run', 'r1', '--file', 'long.md'], {
      cwd: root,
      env: { CAIRN_DEADLINE_MS: '1' },
    });
    expect(store.stderr).toMatch(/this run is kept/);
    letGo();
    // a job with a deadline, as every background one has (a third of it for each kept run)
    for (let i = 0; i < 2; i++) {
      const job = run('cairn', ['rebuild', '--continue', '--json'], { cwd: root, env: { CAIRN_DEADLINE_MS: '600' } });
      expect(job.code, job.stderr).toBe(0);
      expect(JSON.parse(job.stdout).deferred).toBe(0);
      expect(kept(root)).toEqual([expect.stringMatching(/^\d{15}-[0-9a-f]{8}\.failed$/)]);
    }
    expect(readFileSync(join(root, '.cairn', 'cache', 'errors.log'), 'utf8')).toMatch(
      /store-deliberation: a kept store-deliberation was not applied within 200 ms and is set aside/,
    );
    const doctor = doctorCheck(root);
    expect(doctor.code).toBe(1);
    expect(doctor.check).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(
        /^1 kept run\(s\) took longer than the 60 s a background job gives one and were set aside \(cache\/deferred\/.*\.failed\): run cairn rebuild --continue at a terminal/,
      ),
    });

    const person = run('cairn', ['rebuild', '--continue', '--json', '--strict'], { cwd: root });
    expect(JSON.parse(person.stdout).deferred).toBe(1);
    expect(kept(root)).toEqual([]);
    expect(events(root, 'deliberation.stored')).toHaveLength(1);
  });

  it('a background job runs with a deadline of its own: the sanitiser a capture starts gets 10 minutes', () => {
    const root = tempProject();
    expect(
      run('memory-capture', ['--bead', 'b-1', '--text', 'LEARNED: the ledger totals are computed in cents'], {
        cwd: root,
      }).code,
    ).toBe(0);
    let pid: number | undefined;
    waitUntil(
      () =>
        (pid = processesIn(root).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('sanitize\0--catch-up'))) !== undefined,
      10_000,
    );
    expect(pid, 'no background sanitiser').toBeDefined();
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(env).toContain('CAIRN_DEADLINE_MS=600000');
  });
});
