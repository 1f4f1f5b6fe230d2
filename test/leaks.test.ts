import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { leakedSecrets, openTestStore, removeProject, run, secretShapes, tempDir, type RunResult } from './helpers.js';
import { initStore } from '../lib/store/init.js';
import { promotePattern, deprecatePattern } from '../lib/patterns/lifecycle.js';
import { listPatterns } from '../lib/patterns/queries.js';
import { patternDb } from '../lib/events/log.js';

// Nothing secret reaches git or an output (SPEC §4.6, the fault-injection suite's secret shapes). Every
// path that keeps a text — store-deliberation (pattern items, finding summaries, the artifact),
// store-summary, promote and deprecate, memory-capture, a landing report through outcome-score and
// cairn patterns capture — is given every secret of the corpus, and then no committed file and no
// output of any reader (stdout and stderr, text and --json, every auto-recall format) holds one. A log
// written before these rules, or by a teammate's older cairn, is read the same way, counted by cairn
// doctor and rewritten by cairn scrub. (feedback-loop's validator reason: test/feedback-loop.test.ts.)

const NOW = '2026-03-02T10:00:00.000Z';
const PROJECT = 'leaksproject01';
const env = { CAIRN_NOW: NOW, CAIRN_PROJECT: PROJECT };
const shapes = secretShapes();

const cli = (cwd: string, name: string, args: string[], input?: string) => run(name, args, { cwd, input, env });
const both = (r: RunResult) => `${r.stdout}\n${r.stderr}`;
const oneLine = (text: string) => text.replace(/\s+/g, ' ');

/** Every file under the store a user commits: all but cache/ (ignored, local). The artifacts are read too. */
function committedFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (relative(join(root, '.cairn'), path) !== 'cache') walk(path);
      } else files.push(path);
    }
  };
  walk(join(root, '.cairn'));
  return files;
}

function leaksInFiles(root: string): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const file of committedFiles(root)) {
    const leaked = leakedSecrets(readFileSync(file, 'utf8'), shapes);
    if (leaked.length) found[relative(root, file)] = leaked;
  }
  return found;
}

/** A project shared by the tests of one describe (a temporary project is removed after each test). */
function sharedProject(): string {
  const root = mkdtempSync(join(tmpdir(), 'cairn-leaks-'));
  mkdirSync(join(root, '.git'));
  initStore(join(root, '.cairn'));
  writeFileSync(join(root, '.cairn', 'config.json'), JSON.stringify({ project: PROJECT }));
  afterAll(() => removeProject(root));
  return root;
}

const sessionStart = (cwd: string, prompt: string) => JSON.stringify({ hook_event_name: 'SessionStart', cwd, source: 'startup', prompt });

/** Every reader of what the store paths kept, as processes: name → its stdout and stderr. */
function readAll(root: string, patternIds: string[]): Record<string, string> {
  const query = 'commit deploy token password key vault repository logs';
  const out: Record<string, string> = {};
  const read = (label: string, name: string, args: string[], input?: string) => (out[label] = both(cli(root, name, args, input)));
  read('format-patterns', 'format-patterns', ['--role', 'auditor', '--budget', '100000']);
  read('format-patterns --json --ids --query', 'format-patterns', [
    '--role',
    'auditor',
    '--budget',
    '100000',
    '--json',
    '--ids',
    '--query',
    query,
  ]);
  read('format-patterns --query', 'format-patterns', ['--role', 'auditor', '--budget', '100000', '--query', query]);
  read('list', 'cairn', ['list', '--state', 'observed,candidate,verified,active,deprecated']);
  read('list --json', 'cairn', ['list', '--json', '--state', 'observed,candidate,verified,active,deprecated']);
  read('events', 'cairn', ['events']);
  read('events --json', 'cairn', ['events', '--json']);
  for (const id of patternIds.slice(0, 3)) {
    read(`explain ${id}`, 'cairn', ['explain', id]);
    read(`explain ${id} --json`, 'cairn', ['explain', id, '--json']);
  }
  read('recall', 'cairn', ['recall', query, '--all', '--limit', '50']);
  read('recall --json', 'cairn', ['recall', query, '--all', '--limit', '50', '--json']);
  read('recall --recent', 'cairn', ['recall', '--recent', '50', '--json']);
  for (const format of ['claude', 'codex', 'gemini', 'cursor', 'text'])
    read(`auto-recall --format ${format}`, 'auto-recall', ['--format', format], sessionStart(root, query));
  read('auto-recall --json', 'auto-recall', ['--json'], sessionStart(root, query));
  read('patterns', 'cairn', ['patterns']);
  read('patterns --json', 'cairn', ['patterns', '--json']);
  read('patterns query', 'cairn', ['patterns', query]);
  read('doctor', 'cairn', ['doctor']);
  read('doctor --json', 'cairn', ['doctor', '--json']);
  return out;
}

function leaksInOutputs(outputs: Record<string, string>): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const [reader, text] of Object.entries(outputs)) {
    const leaked = leakedSecrets(text, shapes);
    if (leaked.length) found[reader] = leaked;
  }
  return found;
}

/** What the index (a local cache) holds: the pattern texts and the knowledge contents. */
function indexed(root: string): { texts: string; knowledge: string } {
  const db = new BetterSqlite3(join(root, '.cairn', 'cache', 'state.db'), { readonly: true });
  try {
    const texts = (db.prepare('SELECT text FROM patterns').all() as { text: string }[]).map((row) => row.text).join('\n');
    const knowledge = (db.prepare('SELECT content FROM knowledge').all() as { content: string }[]).map((row) => row.content).join('\n');
    return { texts, knowledge };
  } finally {
    db.close();
  }
}

/** A deliberation that holds every secret: one pattern item and one verdict finding each. */
function deliberationWithSecrets(): string {
  const items = shapes.map((s) => `- ${s.text.split('\n').join('\n  ')}`);
  const issues = shapes.map((s, i) => ({ id: `A${i + 1}`, severity: 'high', summary: oneLine(s.text) }));
  const verdict = { verdict: 'FAIL', issues, must_fix: issues.map((f) => f.id), false_positives: [] };
  return `# auditor — LED-9 plan r1\n\n## Accumulated Patterns\n\n${items.join('\n')}\n\n<!-- jkz:verdict-json ${JSON.stringify(verdict)} -->\n`;
}

/** A shell command an agent ran that adds one bd comment per secret (each quoted as the shell would). */
function commentsCommand(): string {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  return shapes.map((s, i) => `bd comments add bd-${i + 1} ${quote(`LEARNED: ${s.text}`)}`).join(' && ');
}

function landingReport(title: string): string {
  return JSON.stringify({
    title,
    summary: shapes.map((s) => oneLine(s.text)),
    prompt: shapes.map((s) => oneLine(s.text)).join(' '),
    changedPaths: ['src/deploy/vault.ts', 'docs/deploy.md'],
    validationCommand: `curl -H "Authorization: Bearer ${shapes.find((s) => s.name === 'Bearer header')!.secret}" https://ci.internal/health`,
    commandsRun: shapes.map((s) => oneLine(s.text)),
  });
}

describe('every path that keeps a text, given every secret of the corpus', () => {
  let root: string;
  const writes: Record<string, RunResult> = {};
  let outputs: Record<string, string>;

  beforeAll(() => {
    root = sharedProject();
    writes['store-deliberation'] = cli(
      root,
      'store-deliberation',
      ['--role', 'auditor', '--issue', 'LED-9', '--run', 'r1', '--json'],
      deliberationWithSecrets(),
    );
    // a stored summary is at most 3000 bytes: the corpus in four
    for (let i = 0; i < shapes.length; i += 9) {
      const chunk = shapes
        .slice(i, i + 9)
        .map((s) => s.text)
        .join('\n');
      writes[`store-summary ${i}`] = cli(
        root,
        'cairn',
        ['store-summary', '--role', ['auditor', 'judge', 'sentinel', 'lens'][i / 9]],
        chunk,
      );
    }
    const command = commentsCommand();
    writes['memory-capture'] = cli(
      root,
      'memory-capture',
      [],
      JSON.stringify({
        hook_event_name: 'PostToolUse',
        cwd: root,
        tool_name: 'Bash',
        tool_input: { command },
        tool_response: { stdout: '', stderr: '' },
      }),
    );
    writeFileSync(join(root, 'landing.json'), landingReport('Ship the deploy vault'));
    writes['outcome-score'] = cli(root, 'outcome-score', [
      '--issue',
      'LED-9',
      '--run',
      'r1',
      '--result',
      'pass',
      '--report',
      'landing.json',
      '--json',
    ]);
    writeFileSync(join(root, 'landing-2.json'), landingReport(shapes[0].text));
    writes['patterns capture'] = cli(root, 'cairn', ['patterns', 'capture', '--report', 'landing-2.json', '--json']);
    // promote and deprecate, a reason and a name with each secret (in-process: 66 changes), then once each as processes
    const s = openTestStore(root, PROJECT);
    const ids = listPatterns(patternDb(s), s.project).map((p) => p.id);
    const target = ids[0];
    shapes.forEach((shape, i) => {
      promotePattern(s, target, oneLine(shape.text).slice(0, 200), `${i}: ${oneLine(shape.text)}`);
      deprecatePattern(s, target, `${i}: ${oneLine(shape.text)}`);
    });
    s.close();
    const bearer = shapes.find((x) => x.name === 'Bearer header')!;
    writes.promote = cli(root, 'cairn', ['promote', target, '--by', bearer.text, '--reason', bearer.text, '--json']);
    writes.deprecate = cli(root, 'cairn', ['deprecate', target, '--reason', shapes[0].text, '--json']);
    outputs = readAll(root, ids);
  });

  it('each write ran and kept its texts (they are there, redacted)', () => {
    for (const [name, r] of Object.entries(writes)) expect(r.code, `${name}: ${r.stderr}`).toBe(0);
    const stored = JSON.parse(writes['store-deliberation'].stdout);
    expect(stored.patterns.length).toBeGreaterThanOrEqual(30);
    expect(stored.links.length).toBe(shapes.length);
    const events = readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8');
    expect(events).toContain('[REDACTED:github-token]');
    expect(events).toContain('summary.stored');
    expect(events).toContain('pattern.promoted');
    expect(
      readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean),
    ).toHaveLength(shapes.length);
    expect(
      readFileSync(join(root, '.cairn', 'landings.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean),
    ).toHaveLength(2);
  });

  it('no committed file holds a secret: events.jsonl, the knowledge log, landings.jsonl, the artifacts', () => {
    expect(existsSync(join(root, '.cairn', 'artifacts', 'deliberations'))).toBe(true);
    expect(leaksInFiles(root)).toEqual({});
  });

  it('no writer prints one, on stdout or stderr', () => {
    expect(leaksInOutputs(Object.fromEntries(Object.entries(writes).map(([k, r]) => [k, both(r)])))).toEqual({});
  });

  it('no reader prints one: format-patterns, list, events, explain, recall, auto-recall in every format, patterns, doctor', () => {
    expect(Object.keys(outputs).length).toBeGreaterThanOrEqual(25);
    expect(outputs['format-patterns']).toContain('[REDACTED:');
    expect(leaksInOutputs(outputs)).toEqual({});
  });
});

/** Lines an older cairn (or a hand) wrote: every secret raw in pattern texts, summaries, reasons, knowledge and the landing library. */
function plantOldLogs(root: string): string[] {
  const lines: string[] = [];
  const ids: string[] = [];
  let n = 0;
  const event = (payload: Record<string, unknown>) => {
    n++;
    const ts = new Date(Date.parse('2026-02-01T00:00:00.000Z') + n * 1000).toISOString();
    lines.push(JSON.stringify({ v: 1, id: `01KOLD${String(n).padStart(20, '0')}`, ts, project: PROJECT, ...payload }));
  };
  shapes.forEach((s, i) => {
    const pattern = `pold${String(i).padStart(12, '0')}`;
    ids.push(pattern);
    const scope = { issue: 'OLD-1', run: 'r1', phase: null, labels: [], files: [] };
    event({
      type: 'deliberation.stored',
      deliberation: `dold${i}`,
      role: 'auditor',
      ...scope,
      iteration: null,
      verdict: null,
      evidence: 'L3',
      hash: String(i).padStart(64, '0'),
      size: 1,
      path: `artifacts/deliberations/dold${i}.md`,
    });
    event({
      type: 'pattern.observed',
      pattern,
      role: 'auditor',
      text: oneLine(s.text).slice(0, 500),
      category: 'rule',
      ...scope,
      deliberation: `dold${i}`,
    });
    event({
      type: 'finding.linked',
      deliberation: `dold${i}`,
      role: 'auditor',
      issue: 'OLD-1',
      run: 'r1',
      finding: `F${i}`,
      summary: oneLine(s.text).slice(0, 160),
      patterns: [pattern],
      match: 'self',
    });
  });
  event({ type: 'pattern.promoted', pattern: ids[0], by: oneLine(shapes[1].text), reason: oneLine(shapes[2].text) });
  event({ type: 'pattern.deprecated', pattern: ids[3], reason: oneLine(shapes[4].text), auto: false });
  event({
    type: 'summary.stored',
    role: 'auditor',
    basis: 'b'.repeat(32),
    text: shapes
      .slice(0, 6)
      .map((s) => s.text)
      .join('\n'),
  });
  writeFileSync(join(root, '.cairn', 'events.jsonl'), lines.join('\n') + '\n');
  mkdirSync(join(root, '.cairn', 'memory'), { recursive: true });
  const entries = shapes.map((s, i) =>
    JSON.stringify({
      key: `learned-old-${i}`,
      type: 'learned',
      content: s.text,
      source: 'hook',
      tags: ['deploy'],
      ts: 1769900000 + i,
      bead: `bd-${i}`,
      project: PROJECT,
    }),
  );
  writeFileSync(
    join(root, '.cairn', 'memory', 'knowledge.jsonl'),
    [
      ...entries,
      JSON.stringify({
        key: 'learned-clean',
        type: 'learned',
        content: 'Deploys run from the release workflow only',
        source: 'hook',
        tags: [],
        ts: 1769900100,
        bead: 'bd-99',
        project: PROJECT,
      }),
    ].join('\n') + '\n',
  );
  writeFileSync(join(root, '.cairn', 'memory', 'knowledge.archive.jsonl'), entries.slice(0, 3).join('\n') + '\n');
  const library = shapes.slice(0, 5).map((s, i) => ({
    id: `lp-old${i}`,
    sourceRepoRoot: PROJECT,
    missionId: null,
    reportId: null,
    title: `Deploy vault ${i}: ${oneLine(s.text)}`,
    summary: oneLine(s.text),
    prompt: oneLine(s.text),
    tags: ['deploy'],
    examplePaths: ['src/deploy/vault.ts'],
    commands: [oneLine(s.text)],
    createdAt: '2026-02-01T00:00:00.000Z',
    updatedAt: '2026-02-01T00:00:00.000Z',
  }));
  writeFileSync(join(root, '.cairn', 'landing-patterns.json'), JSON.stringify(library, null, 2) + '\n');
  // the landing log a later cairn writes, one capture a line
  writeFileSync(
    join(root, '.cairn', 'landings.jsonl'),
    library
      .slice(0, 2)
      .map((e) => JSON.stringify({ ...e, id: `${e.id}-log` }))
      .join('\n') + '\n',
  );
  return ids;
}

describe('a log written before these rules, or by an older cairn, holding every secret', () => {
  let root: string;
  let ids: string[];
  let before: Record<string, string>;

  beforeAll(() => {
    root = sharedProject();
    ids = plantOldLogs(root);
    before = readAll(root, ids);
  });

  it('no reader shows what it holds: format-patterns, list, events, explain, recall, auto-recall in every format, patterns', () => {
    expect(before.list).toContain('[REDACTED:');
    expect(before['format-patterns']).toContain('[REDACTED:');
    expect(before['auto-recall --format text']).toContain('[REDACTED:');
    expect(before['patterns']).toContain('[REDACTED:');
    expect(leaksInOutputs(before)).toEqual({});
  });

  it('cairn doctor counts the lines of the committed logs that hold secrets', () => {
    const doctor = JSON.parse(cli(root, 'cairn', ['doctor', '--json']).stdout) as {
      checks: { name: string; status: string; detail: string }[];
    };
    const check = doctor.checks.find((c) => c.name === 'secrets')!;
    expect(check.status).toBe('fail');
    // 33 texts, 33 summaries, the promotion, the deprecation, the stored summary; 33 knowledge lines; 3 archived; 2 logged landings; 5 landing entries of the old library
    expect(check.detail).toContain(`${2 * shapes.length + 3 + shapes.length + 3 + 2 + 5} line(s) of the committed logs hold secrets`);
    expect(check.detail).toMatch(
      /events\.jsonl 69, memory\/knowledge\.jsonl 33, memory\/knowledge\.archive\.jsonl 3, landings\.jsonl 2, landing-patterns\.json 5/,
    );
  });

  it('cairn scrub --dry-run counts them and changes nothing', () => {
    const files = committedFiles(root).map((f) => readFileSync(f, 'utf8'));
    const r = cli(root, 'cairn', ['scrub', '--dry-run', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      dry_run: true,
      backup: null,
      files: [
        { file: 'events.jsonl', lines: 69 },
        { file: 'memory/knowledge.jsonl', lines: 33 },
        { file: 'memory/knowledge.archive.jsonl', lines: 3 },
        { file: 'landings.jsonl', lines: 2 },
        { file: 'landing-patterns.json', lines: 5 },
      ],
    });
    expect(committedFiles(root).map((f) => readFileSync(f, 'utf8'))).toEqual(files);
  });

  it('cairn scrub rewrites them: no committed file holds one, the originals are kept outside the committed tree, and it says the history still holds them', () => {
    const project = tempDir();
    cpSync(root, project, { recursive: true });
    const eventsBefore = readFileSync(join(project, '.cairn', 'events.jsonl'), 'utf8').split('\n');
    const r = cli(project, 'cairn', ['scrub']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('redacted the secrets of 112 line(s)');
    expect(r.stdout).toMatch(/git history still holds the originals/);
    expect(r.stdout).toMatch(/rotate it first/);
    expect(r.stdout).toMatch(/git filter-repo --replace-text/);
    expect(r.stdout).toMatch(/push --force/);
    expect(leaksInFiles(project)).toEqual({});
    expect(leakedSecrets(both(r), shapes)).toEqual([]);
    // the backup, in cache/ (ignored): the four files as they were
    const backups = readdirSync(join(project, '.cairn', 'cache')).filter((d) => d.startsWith('scrub-backup-'));
    expect(backups).toHaveLength(1);
    const backup = join(project, '.cairn', 'cache', backups[0]);
    expect(readFileSync(join(backup, 'events.jsonl'), 'utf8')).toBe(eventsBefore.join('\n'));
    expect(existsSync(join(backup, 'memory', 'knowledge.archive.jsonl'))).toBe(true);
    expect(readFileSync(join(project, '.cairn', '.gitignore'), 'utf8')).toMatch(/^cache\/$/m);
    // lines without a secret are kept byte for byte, and the others keep their ids and order
    const eventsAfter = readFileSync(join(project, '.cairn', 'events.jsonl'), 'utf8').split('\n');
    expect(eventsAfter).toHaveLength(eventsBefore.length);
    eventsAfter.forEach((line, i) => {
      if (!leakedSecrets(eventsBefore[i], shapes).length) expect(line).toBe(eventsBefore[i]);
      else if (line) expect(JSON.parse(line).id).toBe(JSON.parse(eventsBefore[i]).id);
    });
    // the same patterns, the same ids and counters, the texts redacted: the index was replayed from the rewritten log
    const list = JSON.parse(cli(project, 'cairn', ['list', '--json', '--state', 'observed,candidate,verified,active,deprecated']).stdout)
      .patterns as { id: string; text: string; lifecycle: string }[];
    expect(list.map((p) => p.id).sort()).toEqual([...ids].sort());
    expect(list.find((p) => p.id === ids[0])!.lifecycle).toBe('active');
    const { texts, knowledge } = indexed(project);
    expect(leakedSecrets(texts, shapes)).toEqual([]);
    expect(leakedSecrets(knowledge, shapes)).toEqual([]);
    expect(texts).toContain('[REDACTED:');
    // doctor now finds none; a second scrub changes nothing
    const doctor = JSON.parse(cli(project, 'cairn', ['doctor', '--json']).stdout) as {
      checks: { name: string; status: string; detail: string }[];
    };
    expect(doctor.checks.find((c) => c.name === 'secrets')).toEqual({
      name: 'secrets',
      status: 'ok',
      detail: 'none in the committed logs',
    });
    const files = committedFiles(project).map((f) => readFileSync(f, 'utf8'));
    const again = cli(project, 'cairn', ['scrub']);
    expect(again.stderr).toContain('no secrets in the committed logs');
    expect(committedFiles(project).map((f) => readFileSync(f, 'utf8'))).toEqual(files);
  });

  it('a clone whose index was built from the originals replays the scrubbed logs it pulls', () => {
    const clone = tempDir();
    cpSync(root, clone, { recursive: true });
    expect(cli(clone, 'cairn', ['list']).code).toBe(0); // its index holds the original texts
    const scrubbed = tempDir();
    cpSync(root, scrubbed, { recursive: true });
    expect(cli(scrubbed, 'cairn', ['scrub']).code).toBe(0);
    for (const file of [
      'events.jsonl',
      'memory/knowledge.jsonl',
      'memory/knowledge.archive.jsonl',
      'landings.jsonl',
      'landing-patterns.json',
    ]) {
      cpSync(join(scrubbed, '.cairn', file), join(clone, '.cairn', file)); // the pull
    }
    expect(cli(clone, 'cairn', ['list']).code).toBe(0);
    expect(cli(clone, 'cairn', ['recall', 'deploy', '--all']).code).toBe(0);
    const { texts, knowledge } = indexed(clone);
    expect(leakedSecrets(texts, shapes)).toEqual([]);
    expect(leakedSecrets(knowledge, shapes)).toEqual([]);
  });
});
