import { describe, it, expect } from 'vitest';
import { classify, decide, lineText, type Failure, type Line, type Outcome, type Situation } from '../lib/cli/outcome.js';
import { CairnError, IndexCatchingUp } from '../lib/core/errors.js';
import { DEFERRED_AGAIN, DEFERRED_TOO_LONG } from '../lib/core/deferred-env.js';

// The fail-open policy (SPEC §2) as a table: every combination of how a run ended, what failed, and
// where it stood, against the one row of this table it falls under.

const FAILURES: Failure[] = ['usage', 'deadline', 'busy', 'corrupt', 'fault'];
const BOOL = [false, true];

type Threw = Omit<Situation, 'ended' | 'late' | 'returned' | 'failure'> & { failure: Failure };

/** Every run that threw: 5 failures × committed × keepsRuns × replayed × hasStore × strict × interactive × json. */
function everyThrow(): Threw[] {
  const all: Threw[] = [];
  for (const failure of FAILURES)
    for (const committed of BOOL)
      for (const keepsRuns of BOOL)
        for (const replayed of BOOL)
          for (const hasStore of BOOL)
            for (const strict of BOOL)
              for (const interactive of BOOL)
                for (const json of BOOL) all.push({ failure, committed, keepsRuns, replayed, hasStore, strict, interactive, json });
  return all;
}

type Expected = Pick<Outcome, 'exit' | 'keep' | 'health' | 'line'> & {
  stdout: Outcome['stdout'] | 'deferred if --json' | 'error if --json';
};

/** The policy, first matching row wins. */
const TABLE: { when: string; match: (s: Threw) => boolean; then: Expected }[] = [
  {
    when: 'a kept run being applied runs out of its own deadline: set aside by the applier, which records it',
    match: (s) => s.failure === 'deadline' && !s.committed && s.keepsRuns && s.replayed,
    then: { exit: DEFERRED_TOO_LONG, keep: false, health: 'leave', line: 'replay-too-long', stdout: 'nothing' },
  },
  {
    when: 'a kept run being applied meets a lock or the index catching up: it waits for the next applier',
    match: (s) => s.failure === 'busy' && !s.committed && s.keepsRuns && s.replayed,
    then: { exit: DEFERRED_AGAIN, keep: false, health: 'record', line: 'replay-again', stdout: 'nothing' },
  },
  {
    when: 'a writer meets a passing failure before recording anything: its run is kept, exit 0 even under --strict',
    match: (s) => (s.failure === 'deadline' || s.failure === 'busy') && !s.committed && s.keepsRuns,
    then: { exit: 0, keep: true, health: 'leave', line: 'kept', stdout: 'deferred if --json' },
  },
  {
    when: 'the change was recorded: never a failure (a caller would retry and record it twice), the product printed',
    match: (s) => s.committed,
    then: { exit: 0, keep: false, health: 'leave', line: 'after-commit', stdout: 'product' },
  },
  {
    when: 'a usage error at a terminal: exit 2, seen by the person who made it, not recorded',
    match: (s) => s.failure === 'usage' && s.interactive,
    then: { exit: 2, keep: false, health: 'leave', line: 'failed', stdout: 'error if --json' },
  },
  {
    when: 'a usage error under --strict where nobody sees stderr: exit 2, recorded',
    match: (s) => s.failure === 'usage' && s.strict,
    then: { exit: 2, keep: false, health: 'record', line: 'failed', stdout: 'error if --json' },
  },
  {
    when: 'any other failure under --strict: exit 1, recorded',
    match: (s) => s.strict,
    then: { exit: 1, keep: false, health: 'record', line: 'failed', stdout: 'error if --json' },
  },
  {
    when: 'any other failure: skipped, the pipeline continues (exit 0), recorded',
    match: () => true,
    then: { exit: 0, keep: false, health: 'record', line: 'skipped', stdout: 'error if --json' },
  },
];

const threw = (s: Threw): Situation => ({ ended: 'threw', ...s });

function expected(s: Threw): Outcome {
  const { then } = TABLE.find((row) => row.match(s))!;
  const stdout =
    then.stdout === 'deferred if --json'
      ? s.json
        ? 'deferred'
        : 'nothing'
      : then.stdout === 'error if --json'
        ? s.json
          ? 'error'
          : 'nothing'
        : then.stdout;
  // a corrupt index is moved aside whatever else happens, unless --strict makes the corruption the error
  return { ...then, stdout, quarantine: s.failure === 'corrupt' && s.hasStore && !s.strict };
}

describe('the fail-open decision (lib/cli/outcome.ts)', () => {
  it('a run that threw: every one of the 640 combinations as its row of the table says', () => {
    const used = new Set<string>();
    const all = everyThrow();
    for (const s of all) {
      expect(decide(threw(s)), JSON.stringify(s)).toEqual(expected(s));
      used.add(TABLE.find((row) => row.match(s))!.when);
    }
    expect(all).toHaveLength(640);
    expect([...used].sort()).toEqual(TABLE.map((r) => r.when).sort()); // no row of the table is dead
  });

  it("a run that finished in time: the command's exit code, its product, its lines, the health record cleared", () => {
    for (const s of everyThrow()) {
      const { failure: _none, ...rest } = s;
      expect(decide({ ...rest, ended: 'finished', late: false, returned: 1 })).toEqual({
        exit: 1,
        keep: false,
        quarantine: false,
        health: 'clear',
        line: 'done',
        stdout: 'product',
      });
      expect(decide({ ...rest, ended: 'finished', late: false }).exit).toBe(0);
    }
  });

  it('a run that finished past its deadline: done with a warning once its change is recorded, else as if the deadline had stopped it', () => {
    for (const s of everyThrow()) {
      const { failure: _none, ...rest } = s;
      const late = decide({ ...rest, ended: 'finished', late: true, returned: 3 });
      if (s.committed) expect(late).toEqual({ exit: 3, keep: false, quarantine: false, health: 'clear', line: 'late', stdout: 'product' });
      else expect(late, JSON.stringify(s)).toEqual(decide(threw({ ...s, failure: 'deadline' })));
    }
  });

  it("the deadline's timer (a wait on I/O): the process ends at once, never keeping its run; once recorded, nothing printed and exit 0", () => {
    for (const s of everyThrow()) {
      const timedOut = decide({ ...s, ended: 'timed-out' });
      if (s.committed)
        expect(timedOut).toEqual({
          exit: 0,
          keep: false,
          quarantine: false,
          health: 'leave',
          line: 'timed-out-after-commit',
          stdout: 'nothing',
        });
      else expect(timedOut, JSON.stringify(s)).toEqual(decide(threw({ ...s, failure: 'deadline', keepsRuns: false })));
    }
  });

  it('a run that could not be kept is decided again as a run that does not keep: it fails open', () => {
    const s: Threw = {
      failure: 'busy',
      committed: false,
      keepsRuns: true,
      replayed: false,
      hasStore: true,
      strict: false,
      interactive: false,
      json: true,
    };
    expect(decide(threw(s)).keep).toBe(true);
    expect(decide(threw({ ...s, keepsRuns: false }))).toMatchObject({
      keep: false,
      line: 'skipped',
      health: 'record',
      stdout: 'error',
    });
  });
});

describe('what a thrown value counts as', () => {
  it.each<[string, unknown, Failure]>([
    ['a usage error', new CairnError('usage', 'unknown flag --x'), 'usage'],
    ['the deadline', new CairnError('deadline', 'deadline of 2000 ms passed'), 'deadline'],
    ['the index out of time catching up', new IndexCatchingUp('deadline', 'deadline passed while indexing events'), 'deadline'],
    ['a lock held', new CairnError('lock', 'is held by another process'), 'busy'],
    ['the index held by its replay', new IndexCatchingUp('lock', 'state.db is held'), 'busy'],
    ['runs kept before this one', new IndexCatchingUp('store', '2 earlier run(s) kept for later are not applied yet'), 'busy'],
    ['a corrupt page', Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' }), 'corrupt'],
    ['not a database', Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' }), 'corrupt'],
    ['bad input', new CairnError('input', 'no verdict'), 'fault'],
    ['a broken store', new CairnError('store', 'no cairn store'), 'fault'],
    ['a bug', new TypeError('x is undefined'), 'fault'],
  ])('%s is %s', (_what, err, failure) => {
    expect(classify(err)).toBe(failure);
  });
});

describe('the line a run ends with', () => {
  const facts = { message: 'lock held', deadlineMs: 300, kept: '(cache/deferred/1.json) and applied in order by x' };
  it.each<[Line, string | undefined]>([
    ['done', undefined],
    ['late', 'finished past the deadline of 300 ms; the change is recorded'],
    ['after-commit', 'lock held (after the change was recorded; the next run catches up)'],
    ['timed-out-after-commit', 'deadline of 300 ms passed after the change was recorded; nothing printed'],
    ['kept', 'lock held: this run is kept (cache/deferred/1.json) and applied in order by x'],
    ['replay-too-long', 'a kept run ran out of its 300 ms: lock held'],
    ['replay-again', 'a kept run is not applied yet: lock held'],
    ['skipped', 'skipped (pipeline continues): lock held'],
    ['failed', 'lock held'],
  ])('%s', (line, text) => {
    expect(lineText(line, facts)).toBe(text);
  });
});
