import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, run, tempDir } from './helpers.js';
import { readLandings } from '../lib/landing/library.js';

// Landing patterns shared through git (SPEC §5, issue 27): a clone sees them, and a merge of two
// branches that both captured a landing never conflicts — the landing log is append-only and merged
// by union, and its reader folds the captures of one piece of work into one entry.

const REPORT = readFileSync(join(FIXTURES, 'landing', 'land-report.example.json'), 'utf8');

function git(cwd: string, ...args: string[]) {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=cairn test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  );
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A git repository without a remote, with cairn initialised and committed. */
function repository(): string {
  const root = join(tempDir(), 'project');
  spawnSync('mkdir', ['-p', root]);
  expect(git(root, 'init', '-q').code).toBe(0);
  expect(run('cairn', ['init', '--quiet', '--strict'], { cwd: root }).code).toBe(0);
  commitAll(root, 'set up cairn');
  return root;
}

function commitAll(root: string, message: string): void {
  expect(git(root, 'add', '-A').code).toBe(0);
  const r = git(root, 'commit', '-q', '-m', message);
  expect(r.code, r.out).toBe(0);
}

/** A landing report of some work: `title`, touching `paths`. */
function report(root: string, name: string, title: string, paths: string[], id = name): string {
  const file = join(root, '..', `${name}.json`);
  writeFileSync(file, JSON.stringify({ id, goal: title, changedByAgent: [{ agent: 'codex', paths }], validationCommand: 'npm test' }));
  return file;
}

const capture = (root: string, file: string) => {
  const r = run('cairn', ['patterns', 'capture', '--report', file, '--strict'], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
};

const listed = (root: string) =>
  JSON.parse(run('cairn', ['patterns', '--json', '--strict'], { cwd: root }).stdout).patterns as {
    id: string;
    title: string;
    report_id: string;
  }[];

describe('landing patterns through git', () => {
  it('a clone of a project without a remote sees its landings: cairn patterns, auto-recall and format-patterns --query', () => {
    const origin = repository();
    const captured = run('outcome-score', ['--issue', 'LED-8', '--run', 'r1', '--result', 'pass', '--strict'], {
      cwd: origin,
      input: REPORT,
    });
    expect(captured.code, captured.stderr).toBe(0);
    commitAll(origin, 'a landing');
    const clone = join(origin, '..', 'clone');
    expect(git(join(origin, '..'), 'clone', '-q', origin, clone).code).toBe(0);

    expect(listed(clone).map((p) => p.title)).toEqual(['Build a clinic command center']);
    const text = run('cairn', ['patterns'], { cwd: clone });
    expect(text.stdout).toContain('Build a clinic command center');
    expect(text.stderr).not.toContain('no landing patterns yet');
    const prompt = JSON.stringify({
      hook_event_name: 'UserPromptSubmit',
      session_id: 's1',
      cwd: '.',
      prompt: 'the clinic command center web shell',
    });
    const recalled = run('auto-recall', ['--format', 'text'], { cwd: clone, input: prompt });
    expect(recalled.stdout).toMatch(/^Pattern: Build a clinic command center — files: apps\/api\/src\/server\.ts/m);
    const block = run('format-patterns', ['--role', 'auditor', '--query', 'clinic command center'], { cwd: clone });
    expect(block.stdout).toMatch(/^Pattern: Build a clinic command center/m);
  });

  it('two branches that each captured a landing merge without a conflict, and the merged log shows both', () => {
    const root = repository();
    git(root, 'checkout', '-q', '-b', 'billing');
    capture(root, report(root, 'billing', 'Add the invoice export endpoint', ['src/billing/export.ts']));
    commitAll(root, 'billing landing');
    git(root, 'checkout', '-q', 'main');
    capture(root, report(root, 'auth', 'Add OAuth login to the API', ['src/auth/oauth.ts']));
    commitAll(root, 'auth landing');
    const merged = git(root, 'merge', '-q', '--no-edit', 'billing');
    expect(merged.code, merged.out).toBe(0);
    expect(merged.out).not.toMatch(/CONFLICT/);
    expect(
      listed(root)
        .map((p) => p.title)
        .sort(),
    ).toEqual(['Add OAuth login to the API', 'Add the invoice export endpoint']);
    // the event log's notes merged by union too
    expect(readFileSync(join(root, '.cairn', 'events.jsonl'), 'utf8').match(/"landing\.captured"/g)).toHaveLength(2);
  });

  it('the same work landed on both branches is one entry after the merge, whichever side is merged into which', () => {
    const results: unknown[] = [];
    for (const into of ['main', 'other']) {
      const root = repository();
      git(root, 'checkout', '-q', '-b', 'other');
      capture(root, report(root, 'second', 'Add the invoice export endpoint', ['src/billing/export.ts', 'src/billing/csv.ts'], 'report-2'));
      commitAll(root, 'landed on other');
      git(root, 'checkout', '-q', 'main');
      capture(root, report(root, 'first', 'Add the invoice export endpoint', ['src/billing/export.ts'], 'report-1'));
      commitAll(root, 'landed on main');
      if (into === 'other') git(root, 'checkout', '-q', 'other');
      const merged = git(root, 'merge', '-q', '--no-edit', into === 'main' ? 'other' : 'main');
      expect(merged.code, merged.out).toBe(0);
      const entries = listed(root);
      expect(entries).toHaveLength(1);
      expect(entries[0].title).toBe('Add the invoice export endpoint');
      const entry = readLandings(join(root, '.cairn'))[0];
      expect(entry.examplePaths.sort()).toEqual(['src/billing/csv.ts', 'src/billing/export.ts']);
      const { createdAt: _c, updatedAt: _u, id: _i, sourceRepoRoot: _p, ...rest } = entry; // two repositories: two project ids
      results.push(rest);
    }
    expect(results[0]).toEqual(results[1]); // a union merge in either order folds to the same entry
  });

  it('an existing landing-patterns.json is read with the log, and left as it is', () => {
    const root = repository();
    const project = JSON.parse(readFileSync(join(root, '.cairn', 'config.json'), 'utf8')).project as string;
    const legacy = [
      {
        id: 'lp-0123456789abcdef',
        sourceRepoRoot: project,
        missionId: null,
        reportId: 'report-9',
        title: 'Rotate the audit logs nightly',
        summary: '',
        prompt: null,
        tags: ['logging'],
        examplePaths: ['ops/rotate.sh'],
        commands: ['make check'],
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      },
    ];
    const text = JSON.stringify(legacy, null, 2) + '\n';
    writeFileSync(join(root, '.cairn', 'landing-patterns.json'), text);
    capture(root, report(root, 'auth', 'Add OAuth login to the API', ['src/auth/oauth.ts']));
    expect(
      listed(root)
        .map((p) => p.title)
        .sort(),
    ).toEqual(['Add OAuth login to the API', 'Rotate the audit logs nightly']);
    expect(readFileSync(join(root, '.cairn', 'landing-patterns.json'), 'utf8')).toBe(text);
  });

  it('a store set up before the landing log gets its merge=union line with the first capture', () => {
    const root = repository();
    const attributes = join(root, '.cairn', '.gitattributes');
    writeFileSync(attributes, readFileSync(attributes, 'utf8').replace('landings.jsonl merge=union\n', ''));
    capture(root, report(root, 'auth', 'Add OAuth login to the API', ['src/auth/oauth.ts']));
    expect(readFileSync(attributes, 'utf8')).toContain('landings.jsonl merge=union\n');
  });
});
