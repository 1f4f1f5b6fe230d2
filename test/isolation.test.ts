import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { initStore } from '../lib/store/init.js';
import { projectIdFor, readOriginUrl } from '../lib/store/root.js';
import { fixturePath, run, tempProject, type RunResult } from './helpers.js';

// Every read and write is scoped by project id (SPEC §1.2): two projects sharing one store
// directory never see each other's patterns, and the id itself is derived stably.

const A_FIXTURE = 'led-101-r1-plan-auditor.md';

/** Accumulated Patterns only project B ever writes (vocabulary A's fixture does not use). */
const B_ONLY = [
  'Warehouse pallets must be scanned twice before the forklift leaves the dock',
  'Refrigerated trucks never depart without a signed temperature log',
];
const B_TEXT = `# auditor — WMS-7 plan review\n\nThe plan moves pallets.\n\n## Accumulated Patterns\n\n${B_ONLY.map((t) => `- ${t}`).join('\n')}\n`;

interface Stored {
  patterns: { id: string; text: string }[];
  links: unknown[];
}

function json<T>(r: RunResult): T {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

/** One store directory shared by projects A and B, each reached through the given selector. */
function sharedStore(select: (project: string, dir: string) => { args: string[]; env: Record<string, string> }) {
  const cwd = tempProject({ init: false });
  const dir = join(cwd, 'shared-store');
  initStore(dir);
  const call = (project: string, name: string, args: string[], input = '') => {
    const s = select(project, dir);
    return run(name, [...args, ...s.args], { cwd, input, env: s.env });
  };
  return { cwd, dir, call };
}

const byFlags = (project: string, dir: string) => ({ args: ['--project', project, '--dir', dir], env: {} });
const byEnv = (project: string, dir: string) => ({ args: [], env: { CAIRN_PROJECT: project, CAIRN_DIR: dir } });

describe.each([
  ['flags', byFlags],
  ['environment', byEnv],
])('two projects in one store directory (selected by %s)', (_how, select) => {
  it('never see each other in format-patterns, explain or events', () => {
    const { call } = sharedStore(select);
    const a = json<Stored>(
      call('A', 'store-deliberation', [
        '--role',
        'auditor',
        '--issue',
        'LED-101',
        '--run',
        'r1',
        '--file',
        fixturePath(A_FIXTURE),
        '--json',
      ]),
    );
    const b = json<Stored>(call('B', 'store-deliberation', ['--role', 'auditor', '--issue', 'WMS-7', '--run', 'r1', '--json'], B_TEXT));
    // B also stores A's text twice: the same words are a different pattern in another project
    const b2 = json<Stored>(
      call('B', 'store-deliberation', ['--role', 'auditor', '--issue', 'WMS-8', '--run', 'r1', '--file', fixturePath(A_FIXTURE), '--json']),
    );
    json<Stored>(
      call('B', 'store-deliberation', ['--role', 'auditor', '--issue', 'WMS-9', '--run', 'r1', '--file', fixturePath(A_FIXTURE), '--json']),
    );

    const aIds = new Set(a.patterns.map((p) => p.id));
    const bIds = new Set([...b.patterns, ...b2.patterns].map((p) => p.id));
    expect(a.patterns.length).toBeGreaterThan(2);
    expect(b.patterns.map((p) => p.text)).toEqual(B_ONLY);
    expect([...aIds].filter((id) => bIds.has(id))).toEqual([]);

    // format-patterns: A sees exactly its own patterns, B never leaks in
    const fa = json<{ patterns: { id: string; text: string }[]; block: string }>(
      call('A', 'format-patterns', ['--role', 'auditor', '--json']),
    );
    expect(new Set(fa.patterns.map((p) => p.id))).toEqual(aIds);
    for (const text of B_ONLY) expect(fa.block).not.toContain(text);
    const fb = json<{ patterns: { id: string }[]; block: string }>(call('B', 'format-patterns', ['--role', 'auditor', '--json']));
    expect(fb.patterns.every((p) => bIds.has(p.id))).toBe(true);
    expect(fb.block).toContain(B_ONLY[0]);

    // explain: A's copy of the shared text was seen once; B's own copy twice
    const manPage = a.patterns.find((p) => /man page/.test(p.text))!;
    const inA = json<{ pattern: { id: string; success_count: number; sightings: number } }>(
      call('A', 'cairn', ['explain', manPage.text, '--json']),
    );
    expect(inA.pattern).toMatchObject({ id: manPage.id, success_count: 1, sightings: 1 });
    const inB = json<{ pattern: { id: string; success_count: number; sightings: number } }>(
      call('B', 'cairn', ['explain', manPage.text, '--json']),
    );
    expect(inB.pattern.id).not.toBe(manPage.id);
    expect(inB.pattern).toMatchObject({ success_count: 2, sightings: 2 });

    // another project's id or text is not found: fail open, nothing on stdout
    const bOnlyId = b.patterns[0].id;
    for (const ref of [bOnlyId, B_ONLY[0]]) {
      const miss = call('A', 'cairn', ['explain', ref]);
      expect(miss.code).toBe(0);
      expect(miss.stdout).toBe('');
      expect(miss.stderr).toMatch(/^cairn explain: skipped \(pipeline continues\): no pattern matches/);
      expect(call('A', 'cairn', ['explain', ref, '--strict']).code).toBe(1);
    }

    // events: only A's lines, none mentioning B's patterns
    const ev = call('A', 'cairn', ['events', '--json']);
    expect(ev.code).toBe(0);
    const events = ev.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { project: string; type: string });
    expect(events.length).toBe(1 + a.patterns.length + a.links.length);
    expect(events.every((e) => e.project === 'A')).toBe(true);
    for (const id of bIds) expect(ev.stdout).not.toContain(id);
    const evB = call('B', 'cairn', ['events', '--type', 'deliberation']);
    expect(evB.stdout.trim().split('\n')).toHaveLength(3);
    expect(evB.stdout).not.toContain('LED-101');

    // a rebuild of the shared database keeps the projects apart
    expect(call('A', 'cairn', ['rebuild', '--strict']).code).toBe(0);
    const again = json<{ patterns: { id: string }[] }>(call('A', 'format-patterns', ['--role', 'auditor', '--json']));
    expect(new Set(again.patterns.map((p) => p.id))).toEqual(aIds);
    const againB = json<{ patterns: { id: string }[] }>(call('B', 'format-patterns', ['--role', 'auditor', '--json']));
    expect(againB.patterns.map((p) => p.id).sort()).toEqual(fb.patterns.map((p) => p.id).sort());
  });
});

describe('project id derivation', () => {
  function repoWithOrigin(url: string | undefined, extraConfig = ''): string {
    const root = tempProject({ init: false });
    const remote = url === undefined ? '' : `[remote "origin"]\n\turl = ${url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`;
    writeFileSync(join(root, '.git', 'config'), `[core]\n\tbare = false\n${extraConfig}${remote}[branch "main"]\n\tremote = origin\n`);
    return root;
  }

  it('the same repository reached by https with credentials or by scp-style ssh has one id', () => {
    const https = repoWithOrigin('https://deploy:ghp_s3cret@GitHub.COM/acme/ledgerly.git');
    const scp = repoWithOrigin('git@github.com:acme/ledgerly.git');
    const plain = repoWithOrigin('https://github.com/acme/ledgerly');
    expect(projectIdFor(https)).toBe(projectIdFor(scp));
    expect(projectIdFor(plain)).toBe(projectIdFor(scp));
    expect(projectIdFor(repoWithOrigin('git@github.com:acme/other.git'))).not.toBe(projectIdFor(scp));
  });

  it('reads only the origin remote, quoted or not, among other sections', () => {
    const root = repoWithOrigin(
      '"git@github.com:acme/ledgerly.git"',
      '[remote "upstream"]\n\turl = git@github.com:upstream/ledgerly.git\n',
    );
    expect(readOriginUrl(root)).toBe('git@github.com:acme/ledgerly.git');
    expect(projectIdFor(root)).toBe(projectIdFor(repoWithOrigin('https://github.com/acme/ledgerly.git')));
  });

  it("a worktree (.git file with gitdir: and commondir) gets the main repository's id", () => {
    const main = repoWithOrigin('git@github.com:acme/ledgerly.git');
    const admin = join(main, '.git', 'worktrees', 'feature');
    mkdirSync(admin, { recursive: true });
    writeFileSync(join(admin, 'commondir'), '../..\n');
    const wt = tempProject({ init: false });
    rmSync(join(wt, '.git'), { recursive: true });
    writeFileSync(join(wt, '.git'), `gitdir: ${admin}\n`);
    expect(readOriginUrl(wt)).toBe('git@github.com:acme/ledgerly.git');
    expect(projectIdFor(wt)).toBe(projectIdFor(main));
    // a relative gitdir (as `git worktree add --relative-paths` writes) resolves from the worktree
    writeFileSync(join(wt, '.git'), `gitdir: ${relative(wt, admin)}\n`);
    expect(projectIdFor(wt)).toBe(projectIdFor(main));
  });

  const hasGit = spawnSync('git', ['--version']).status === 0;
  it.skipIf(!hasGit)("a worktree made by git itself gets the main repository's id", () => {
    const main = tempProject({ init: false });
    rmSync(join(main, '.git'), { recursive: true });
    const git = (cwd: string, ...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], {
        cwd,
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
    };
    git(main, 'init', '-q');
    git(main, 'remote', 'add', 'origin', 'https://github.com/Acme/Ledgerly.git');
    git(main, 'commit', '-q', '--allow-empty', '-m', 'init');
    const wt = join(mkdtempSync(join(tmpdir(), 'cairn-wt-')), 'feature');
    try {
      git(main, 'worktree', 'add', '-q', wt);
      expect(projectIdFor(wt)).toBe(projectIdFor(main));
      expect(projectIdFor(wt)).toBe(projectIdFor(repoWithOrigin('git@GITHUB.com:Acme/Ledgerly')));
    } finally {
      rmSync(join(wt, '..'), { recursive: true, force: true });
    }
  });

  it("without an origin remote the id is a stable hash of the root's real path", () => {
    const noConfig = tempProject({ init: false });
    const onlyUpstream = repoWithOrigin(undefined, '[remote "upstream"]\n\turl = git@github.com:acme/ledgerly.git\n');
    const other = tempProject({ init: false });
    expect(projectIdFor(noConfig)).toMatch(/^[0-9a-f]{16}$/);
    expect(projectIdFor(noConfig)).toBe(projectIdFor(noConfig));
    expect(projectIdFor(noConfig)).not.toBe(projectIdFor(other));
    expect(projectIdFor(onlyUpstream)).not.toBe(projectIdFor(repoWithOrigin('git@github.com:acme/ledgerly.git')));
    // reached through a symlink, it is the same project
    const link = join(mkdtempSync(join(tmpdir(), 'cairn-link-')), 'via-link');
    try {
      symlinkSync(realpathSync(noConfig), link);
      expect(projectIdFor(link)).toBe(projectIdFor(noConfig));
    } finally {
      rmSync(join(link, '..'), { recursive: true, force: true });
    }
  });

  it('the executables use that id: the same origin in two clones shares patterns through a shared store', () => {
    const one = repoWithOrigin('https://me:tok@github.com/acme/ledgerly.git');
    const two = repoWithOrigin('git@github.com:acme/ledgerly.git');
    const dir = join(one, 'store');
    initStore(dir);
    const stored = run('store-deliberation', ['--role', 'auditor', '--dir', dir, '--file', fixturePath(A_FIXTURE), '--json'], { cwd: one });
    const ids = (JSON.parse(stored.stdout) as Stored).patterns.map((p) => p.id).sort();
    const fromTwo = run('format-patterns', ['--role', 'auditor', '--dir', dir, '--json'], { cwd: two });
    expect((JSON.parse(fromTwo.stdout) as Stored).patterns.map((p) => p.id).sort()).toEqual(ids);
    const elsewhere = tempProject({ init: false });
    const fromOther = run('format-patterns', ['--role', 'auditor', '--dir', dir, '--json'], { cwd: elsewhere });
    expect((JSON.parse(fromOther.stdout) as Stored).patterns).toEqual([]);
  });
});
