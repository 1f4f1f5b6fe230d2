import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  binPath,
  cleanEnv,
  deliberationFixtures,
  fixturePath,
  fixtureText,
  openTestStore,
  run,
  runAsync,
  seededRandom,
  tempProject,
  type RunResult,
  UNSCOPED,
} from './helpers.js';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { getPattern, listPatterns, type Pattern } from '../lib/patterns/queries.js';
import { patternId } from '../lib/core/ids.js';
import { storeDeliberation } from '../lib/patterns/deliberation.js';
import { ruleKey, sameRule, type RuleKey } from '../lib/patterns/identity.js';
import { extractPatterns } from '../lib/patterns/extract.js';
import { patternDb } from '../lib/events/log.js';

// store-deliberation as a process (SPEC §3.3): stored text, recorded event, observed patterns,
// lifecycle, near-duplicates, learned context, and the echo rule.

const PROJECT = 'ledgerly'; // pinned so pattern ids are the same in every test run
const MAN_PAGE = 'Every new CLI flag must be documented in the man page before merge';
const TEST_FILE = 'Plans must name the test file that proves each acceptance criterion before implementation starts';
const TEST_FILE_NEAR = 'Plans must name the test file that proves each acceptance criterion before implementation begins';
const auditorId = (text: string) => patternId(PROJECT, 'auditor', text);

interface Stored {
  deliberation: string;
  evidence: string;
  verdict: string | null;
  patterns: { id: string; text: string; category: string; source: string; status: string }[];
  links: { finding: string; summary: string; patterns: string[]; match: string }[];
  already_stored: boolean;
}

/** Flags of a fixture as its pipeline would pass them (index.json), with overrides. */
function fixtureArgs(file: string, over: { issue?: string; run?: string } = {}): string[] {
  const f = deliberationFixtures().find((x) => x.file === file)!;
  return [
    '--role',
    f.role,
    '--issue',
    over.issue ?? f.issue,
    '--run',
    over.run ?? f.run,
    '--phase',
    f.phase,
    '--iteration',
    String(f.iteration),
    '--labels',
    f.labels.join(','),
    '--files',
    f.files.join(','),
  ];
}

function storeFixture(dir: string, file: string, opts: { issue?: string; run?: string; now?: string } = {}): Stored {
  const r = run(
    'store-deliberation',
    [...fixtureArgs(file, opts), '--file', fixturePath(file), '--project', PROJECT, '--json', '--strict'],
    {
      cwd: dir,
      env: { CAIRN_NOW: opts.now },
    },
  );
  expect(r.stderr).not.toMatch(/continuing without it|error/i);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

/** The current row of a pattern, read through a fresh store (synced with the log the processes wrote). */
function patternState(dir: string, id: string): Pattern | undefined {
  const store = openTestStore(dir, PROJECT);
  try {
    return getPattern(patternDb(store), PROJECT, id);
  } finally {
    store.close();
  }
}

function allPatterns(dir: string): Pattern[] {
  const store = openTestStore(dir, PROJECT);
  try {
    return listPatterns(patternDb(store), PROJECT, { includeDeprecated: true });
  } finally {
    store.close();
  }
}

function events(dir: string, type: string): Record<string, any>[] {
  const r = run('cairn', ['events', '--type', type, '--json', '--project', PROJECT, '--strict'], { cwd: dir });
  expect(r.code).toBe(0);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('storing a deliberation', () => {
  it('prints the stored ids and patterns with --json, and a one-line summary on stderr', () => {
    const dir = tempProject();
    const r = run('store-deliberation', [...fixtureArgs('led-101-r1-plan-auditor.md'), '--project', PROJECT, '--json'], {
      cwd: dir,
      input: fixtureText('led-101-r1-plan-auditor.md'), // stdin, no --file
    });
    expect(r.code).toBe(0);
    const out: Stored = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(['already_stored', 'deliberation', 'evidence', 'links', 'patterns', 'verdict']);
    expect(out.deliberation).toMatch(/^d[0-9a-z]{26}$/);
    expect(out.evidence).toBe('L3');
    expect(out.verdict).toBe('FAIL');
    // The 5 section items; the findings A1–A3 each apply one of them (SPEC §3.9.1), so none is a pattern of its own.
    expect(out.patterns).toHaveLength(5);
    expect(out.patterns[1]).toEqual({
      id: auditorId(MAN_PAGE),
      text: MAN_PAGE,
      category: 'rule',
      source: 'section',
      status: 'new',
    });
    expect(out.patterns.every((p) => p.status === 'new')).toBe(true);
    expect(out.links.map((l) => [l.finding, l.patterns, l.match])).toEqual([
      ['A1', [out.patterns[2].id], 'text'], // "Plan does not specify the JSON output schema" → the unspecified-schema causal item
      ['A2', [auditorId(MAN_PAGE)], 'text'],
      ['A3', [out.patterns[0].id], 'text'], // "Plan does not name the test file …" → "Plans must name the test file …"
    ]);
    expect(r.stderr.trim().split('\n')).toEqual([
      `cairn store-deliberation: stored ${out.deliberation} (L3, FAIL): 5 patterns — 5 new, 0 seen again, 0 merged, 0 echoes; 3 findings — 3 linked to known patterns, 0 stated as their own`,
    ]);
  });

  it('prints nothing on stdout without --json', () => {
    const dir = tempProject();
    const r = run('store-deliberation', ['--role', 'auditor', '--file', fixturePath('led-101-r1-plan-auditor.md')], {
      cwd: dir,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^cairn store-deliberation: stored d/);
  });

  it('writes the full text as an artifact under .cairn/artifacts/deliberations/', () => {
    const dir = tempProject();
    const out = storeFixture(dir, 'led-102-r1-review-judge.md');
    const artifact = join(dir, '.cairn', 'artifacts', 'deliberations', `${out.deliberation}.md`);
    expect(readFileSync(artifact, 'utf8')).toBe(fixtureText('led-102-r1-review-judge.md'));
  });

  it('records a deliberation.stored event with its scope, verdict digest, evidence, hash and size', () => {
    const dir = tempProject();
    const file = 'led-103-r1-qa-lens.md'; // a valid FAIL block, then an invalid PASS block
    const out = storeFixture(dir, file, { now: '2025-02-03T04:05:06Z' });
    const text = fixtureText(file);
    const [e] = events(dir, 'deliberation.stored');
    expect(e).toEqual({
      v: 1,
      id: expect.any(String),
      ts: '2025-02-03T04:05:06.000Z',
      type: 'deliberation.stored',
      project: PROJECT,
      deliberation: out.deliberation,
      role: 'lens',
      issue: 'LED-103',
      run: 'r1',
      phase: 'qa',
      iteration: 1,
      labels: ['auth', 'security'],
      files: ['src/auth/session.ts', 'src/api/middleware/auth.ts', 'test/session.test.ts'],
      verdict: { verdict: 'FAIL', effective: 'FAIL', must_fix: ['S1'], false_positives: ['S2'], findings: [] },
      evidence: 'L2',
      hash: createHash('sha256').update(text).digest('hex'),
      size: Buffer.byteLength(text),
      path: `artifacts/deliberations/${out.deliberation}.md`,
    });
    expect(existsSync(join(dir, '.cairn', e.path))).toBe(true);
  });

  it('fails open on an empty deliberation, and exits 1 under --strict', () => {
    const dir = tempProject();
    const open = run('store-deliberation', ['--role', 'auditor'], { cwd: dir, input: '  \n' });
    expect(open).toMatchObject({ code: 0, stdout: '' });
    expect(open.stderr).toMatch(/^cairn store-deliberation: .*empty/);
    const strict: RunResult = run('store-deliberation', ['--role', 'auditor', '--strict'], { cwd: dir, input: '' });
    expect(strict.code).toBe(1);
    const usage = run('store-deliberation', ['--strict'], { cwd: dir, input: 'text' });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--role is required/);
  });
});

describe('lifecycle of a recurring pattern', () => {
  it('observed on first sight, with one success and the learned context', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md', { now: '2025-01-10T00:00:00Z' });
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({
      role: 'auditor',
      text: MAN_PAGE,
      category: 'rule',
      lifecycle: 'observed',
      success_count: 1,
      sightings: 1,
      last_used: Date.parse('2025-01-10T00:00:00Z'),
      labels: ['cli'],
      files: ['src/cli/status.ts', 'test/status.test.ts', 'README.md'],
      phases: ['plan'],
      issues: ['LED-101'],
    });
  });

  it('candidate when seen twice, verified when seen 3 times in 2 issues; the context grows', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md', { now: '2025-01-10T00:00:00Z' });
    storeFixture(dir, 'led-101-r2-plan-auditor.md', { now: '2025-01-11T00:00:00Z' });
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({
      lifecycle: 'candidate',
      success_count: 2,
      sightings: 2,
      issues: ['LED-101'],
    });

    storeFixture(dir, 'led-102-r1-plan-auditor.md', { now: '2025-01-12T00:00:00Z' });
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({
      lifecycle: 'verified',
      success_count: 3,
      sightings: 3,
      last_used: Date.parse('2025-01-12T00:00:00Z'),
      labels: ['cli', 'database', 'api'],
      files: [
        'src/cli/status.ts',
        'test/status.test.ts',
        'README.md',
        'src/db/migrations/0042_add_due_date.sql',
        'src/api/invoices.ts',
        'src/cli/migrate.ts',
        'test/invoices.test.ts',
      ],
      phases: ['plan'],
      issues: ['LED-101', 'LED-102'],
    });
  });

  it('stays a candidate when all sightings are in one issue', () => {
    const dir = tempProject();
    for (const r of ['r1', 'r2', 'r3']) storeFixture(dir, 'led-101-r1-plan-auditor.md', { run: r });
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({
      lifecycle: 'candidate',
      sightings: 3,
      success_count: 3,
    });
  });

  it('keeps one pattern per role: the same text from another role is its own pattern', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md');
    run('store-deliberation', ['--role', 'judge', '--project', PROJECT, '--strict'], {
      cwd: dir,
      input: `## Accumulated Patterns\n- ${MAN_PAGE}\n`,
    });
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({ success_count: 1, role: 'auditor' });
    expect(patternState(dir, patternId(PROJECT, 'judge', MAN_PAGE))).toMatchObject({ success_count: 1, role: 'judge' });
  });
});

describe('near-duplicates', () => {
  it('creates a pattern for a text only when no earlier new text of the deliberation is its near-duplicate, as comparing it with each decides (700 texts)', () => {
    const rnd = seededRandom(17);
    const vocabulary = (
      'plan test flag merge schema export invoice ledger retry token cache index migration review status command output page ' +
      'queue worker deploy config secret header timeout locale currency tenant audit report backup session cookie parser router handler'
    ).split(' ');
    const pick = (avoid: string[]) => {
      const left = vocabulary.filter((w) => !avoid.includes(w));
      return left[Math.floor(rnd() * left.length)];
    };
    const base = Array.from({ length: 350 }, () => {
      const text: string[] = [];
      for (let n = 8 + Math.floor(rnd() * 7); text.length < n; ) text.push(pick(text));
      return text;
    });
    // each text followed by a variant with a word or two changed: often a near-duplicate of it, sometimes of another
    const texts = base.flatMap((w) => [w, w.map((x) => (rnd() < 0.1 ? pick(w) : x))]).map((w) => w.join(' '));
    texts.splice(300, 0, '——— !!! ——— ——— !!!', '🙂🙂🙂🙂 🚀🚀🚀🚀 🙂🙂🙂'); // no word at all: only themselves
    const text = `## Accumulated Patterns\n${texts.map((t) => `- ${t}`).join('\n')}\n`;
    const out = storeDeliberation(openTestStore(tempProject(), PROJECT), {
      text,
      role: 'auditor',
      ...UNSCOPED,
      iteration: null,
    });
    // the rule itself, over the texts in order: a text creates a pattern unless it is a near-duplicate of one created before it
    const created: { id: string; key: RuleKey }[] = [];
    const items = extractPatterns(text, null).items;
    for (const item of items) {
      const key = ruleKey(item.text);
      const id = patternId(PROJECT, 'auditor', item.text);
      if (!created.some((c) => c.id === id || sameRule(key, c.key))) created.push({ id, key });
    }
    // a text that lands on a pattern this deliberation created is not listed again
    expect(out.patterns.map((p) => [p.id, p.status])).toEqual(created.map((c) => [c.id, 'new']));
    expect(items.length - created.length).toBeGreaterThan(100); // the rule was put to the test
  });

  // where WebAssembly cannot run, a lookup counts in JavaScript (lib/patterns/index/posting-count.ts)
  it.each([
    // V8 reserves ~10 GB of address space for a WebAssembly memory: under this limit it gets none
    [
      'an address-space limit (ulimit -v) leaves WebAssembly no memory',
      ['/bin/sh', '-c', 'ulimit -v 6000000 && exec "$0" "$@"', process.execPath],
    ],
    ['node runs without WebAssembly (--jitless)', [process.execPath, '--jitless']],
  ])('merges the same where %s', (_, command) => {
    const limited = (args: string[], cwd: string) =>
      spawnSync(command[0], [...command.slice(1), ...args], { cwd, env: cleanEnv(), encoding: 'utf8' });
    expect(limited(['-e', 'new WebAssembly.Memory({ initial: 1 })'], tmpdir()).stderr).toMatch(/RangeError|WebAssembly is not defined/);
    const [plain, capped] = [tempProject(), tempProject()];
    for (const dir of [plain, capped]) storeFixture(dir, 'led-101-r1-plan-auditor.md');
    const expected = storeFixture(plain, 'led-103-r1-plan-auditor.md');
    const file = 'led-103-r1-plan-auditor.md';
    const r = limited(
      [binPath('store-deliberation'), ...fixtureArgs(file), '--file', fixturePath(file), '--project', PROJECT, '--json', '--strict'],
      capped,
    );
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Stored;
    expect(out.patterns).toEqual(expected.patterns);
    expect(out.links).toEqual(expected.links);
    expect(out.patterns.find((p) => p.text === TEST_FILE_NEAR)).toMatchObject({
      id: auditorId(TEST_FILE),
      status: 'merged',
    });
  });

  it('a text with token-set Jaccard ≥ 0.8 to a pattern of the same role counts as that pattern', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md');
    const before = allPatterns(dir).length;
    const out = storeFixture(dir, 'led-103-r1-plan-auditor.md'); // "... before implementation begins", Jaccard 0.867
    const near = out.patterns.find((p) => p.text === TEST_FILE_NEAR);
    expect(near).toMatchObject({ id: auditorId(TEST_FILE), status: 'merged' });
    expect(patternState(dir, auditorId(TEST_FILE_NEAR))).toBeUndefined();
    expect(patternState(dir, auditorId(TEST_FILE))).toMatchObject({
      text: TEST_FILE, // the first wording stays
      success_count: 2,
      lifecycle: 'candidate',
      labels: ['cli', 'auth', 'security'],
      issues: ['LED-101', 'LED-103'],
    });
    const added = out.patterns.filter((p) => p.status === 'new').length;
    expect(allPatterns(dir)).toHaveLength(before + added);
    expect(added).toBe(out.patterns.length - 1);
  });

  it('a finding that paraphrases an item is linked to it, not stored beside it (SPEC §3.9.1)', () => {
    const dir = tempProject();
    const out = storeFixture(dir, 'led-101-r1-qa-sentinel.md'); // S2 paraphrases an item at Jaccard 0.67
    expect(out.patterns.find((p) => p.text.startsWith('Untrusted strings echoed to the terminal'))).toBeUndefined();
    const item = out.patterns.find((p) => p.text.startsWith('Untrusted strings echoed to a terminal must'))!;
    expect(out.links.find((l) => l.finding === 'S2')).toMatchObject({ patterns: [item.id], match: 'text' });
  });
});

describe('echoes are not evidence', () => {
  const inject = (dir: string, issue: string, runId: string, now: string) => {
    const r = run('format-patterns', ['--role', 'auditor', '--issue', issue, '--run', runId, '--project', PROJECT, '--strict'], {
      cwd: dir,
      env: { CAIRN_NOW: now },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(MAN_PAGE);
  };

  it('an injected pattern that comes back in the same run adds no success and no sighting, but refreshes last_used', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md', { now: '2025-01-10T00:00:00Z' });
    inject(dir, 'LED-101', 'r2', '2025-01-11T00:00:00Z');
    const out = storeFixture(dir, 'led-101-r2-plan-auditor.md', { now: '2025-01-12T00:00:00Z' });
    expect(out.patterns.find((p) => p.text === MAN_PAGE)).toMatchObject({ id: auditorId(MAN_PAGE), status: 'echo' });
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({
      success_count: 1,
      sightings: 1,
      lifecycle: 'observed',
      last_used: Date.parse('2025-01-12T00:00:00Z'),
    });
    const observed = events(dir, 'pattern.observed').filter((e) => e.pattern === auditorId(MAN_PAGE));
    expect(observed.map((e) => e.echo ?? false)).toEqual([false, true]);
  });

  it('the same text in another run is a sighting again', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md');
    inject(dir, 'LED-101', 'r2', '2025-01-11T00:00:00Z');
    const out = storeFixture(dir, 'led-101-r2-plan-auditor.md', { run: 'r3' });
    expect(out.patterns.find((p) => p.text === MAN_PAGE)?.status).toBe('seen');
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({
      success_count: 2,
      sightings: 2,
      lifecycle: 'candidate',
    });
  });

  it('a near-duplicate of an injected pattern is an echo too', () => {
    const dir = tempProject();
    storeFixture(dir, 'led-101-r1-plan-auditor.md');
    inject(dir, 'LED-103', 'r1', '2025-01-11T00:00:00Z');
    const out = storeFixture(dir, 'led-103-r1-plan-auditor.md');
    expect(out.patterns.find((p) => p.text === TEST_FILE_NEAR)).toMatchObject({
      id: auditorId(TEST_FILE),
      status: 'echo',
    });
    expect(patternState(dir, auditorId(TEST_FILE))).toMatchObject({
      success_count: 1,
      sightings: 1,
      issues: ['LED-101'],
    });
  });
});

describe('event lines stay small', () => {
  it('keeps every line under 4 KiB however large the deliberation, its verdict and its context are', () => {
    const root = tempProject();
    const store = openTestStore(root);
    const findings = Array.from({ length: 60 }, (_, i) => ({
      id: `A${i}`,
      summary: `Finding number ${i} about a rather long and detailed concern`,
      location: `src/x${i}.ts:${i}`,
    }));
    const text = [
      '## Accumulated Patterns',
      `- ${'Every exported handler must validate its input before touching the database. '.repeat(6).trim().slice(0, 500)}`,
      '## Verdict',
      `<!-- jkz:verdict-json ${JSON.stringify({ verdict: 'FAIL', issues: findings, must_fix: findings.map((f) => f.id), false_positives: findings.map((f) => f.id) })} -->`,
    ].join('\n');
    storeDeliberation(store, {
      text,
      role: 'auditor',
      issue: 'LED-1',
      run: 'r1',
      phase: 'plan',
      iteration: 1,
      labels: Array.from({ length: 40 }, (_, i) => `label-${i}-${'x'.repeat(150)}`),
      files: Array.from({ length: 40 }, (_, i) => `src/${'deep/'.repeat(60)}file-${i}.ts`),
    });
    const lines = readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((l) => JSON.parse(l).type)).toContain('pattern.observed');
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(4096);
  });
});

describe('a retry is not evidence (SPEC §3.9.4)', () => {
  const FILE = 'led-101-r1-plan-auditor.md';
  const args = [...fixtureArgs(FILE), '--project', PROJECT, '--json', '--strict'];
  const artifacts = (dir: string) => readdirSync(join(dir, '.cairn', 'artifacts', 'deliberations'));

  it('storing the same text again for the same role and issue/run prints `already stored` and changes nothing', () => {
    const dir = tempProject();
    const first = run('store-deliberation', args, { cwd: dir, input: fixtureText(FILE) });
    expect(first.code).toBe(0);
    const log = readFileSync(join(dir, '.cairn', 'events.jsonl'));
    const again = run('store-deliberation', args, { cwd: dir, input: fixtureText(FILE) });
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(
      /^cairn store-deliberation: already stored as d[0-9a-z]{26} for this role and issue\/run; nothing changed$/m,
    );
    expect(JSON.parse(again.stdout)).toMatchObject({
      deliberation: JSON.parse(first.stdout).deliberation,
      already_stored: true,
      patterns: [],
      links: [],
    });
    expect(readFileSync(join(dir, '.cairn', 'events.jsonl'))).toEqual(log);
    expect(artifacts(dir)).toHaveLength(1);
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({ success_count: 1, sightings: 1 });
    // Another run of the same issue is new evidence.
    expect(
      run('store-deliberation', [...fixtureArgs(FILE, { run: 'r2' }), '--project', PROJECT, '--strict'], {
        cwd: dir,
        input: fixtureText(FILE),
      }).code,
    ).toBe(0);
    expect(patternState(dir, auditorId(MAN_PAGE))).toMatchObject({ success_count: 2, sightings: 2 });
  });

  it('two processes storing it at once record it once: the later copy in the log changes nothing, live or rebuilt', async () => {
    const dir = tempProject();
    const results = await Promise.all([0, 1, 2].map(() => runAsync('store-deliberation', args, { cwd: dir, input: fixtureText(FILE) })));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    const stored = results.map((r) => JSON.parse(r.stdout));
    const kept = stored.filter((o) => !o.already_stored);
    expect(kept).toHaveLength(1);
    expect(new Set(stored.map((o) => o.deliberation))).toEqual(new Set([kept[0].deliberation]));
    expect(artifacts(dir)).toEqual([`${kept[0].deliberation}.md`]);
    const live = allPatterns(dir);
    expect(live.find((p) => p.text === MAN_PAGE)).toMatchObject({ success_count: 1, sightings: 1 });
    expect(run('cairn', ['rebuild', '--project', PROJECT, '--strict'], { cwd: dir }).code).toBe(0);
    expect(allPatterns(dir)).toEqual(live);
  });
});
