import { describe, it, expect, afterEach } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locate, normaliseRemoteUrl, projectIdFor, projectIdStatus } from '../lib/store/root.js';
import { initStore, recordProjectId } from '../lib/store/init.js';
import { run, tempProject } from './helpers.js';

// Root discovery and its precedence (SPEC §1.2), and remote-URL normalisation for project ids.

const made: string[] = [];
afterEach(() => {
  while (made.length) rmSync(made.pop()!, { recursive: true, force: true });
});

/** A temp dir with no .git: a plain tree to walk in. */
function bareDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'cairn-root-')));
  made.push(dir);
  return dir;
}

describe('root discovery', () => {
  it('walks up to the first directory holding .git', () => {
    const root = realpathSync(tempProject({ init: false }));
    const deep = join(root, 'src', 'a', 'b');
    mkdirSync(deep, { recursive: true });
    const loc = locate({ root: deep }, {});
    expect(loc.root).toBe(root);
    expect(loc.dir).toBe(join(root, '.cairn'));
  });

  it('stops at a nearer .cairn/ (a store inside a subtree of a repository)', () => {
    const root = realpathSync(tempProject({ init: false }));
    const sub = join(root, 'packages', 'api');
    mkdirSync(join(sub, '.cairn'), { recursive: true });
    mkdirSync(join(sub, 'src'), { recursive: true });
    expect(locate({ root: join(sub, 'src') }, {}).root).toBe(sub);
  });

  it('treats a .git file (worktree) as a root marker too', () => {
    const base = bareDir();
    const wt = join(base, 'wt');
    mkdirSync(join(wt, 'lib'), { recursive: true });
    // written by `git worktree add`; only its existence matters for discovery
    writeFileSync(join(wt, '.git'), `gitdir: ${join(base, 'main', '.git', 'worktrees', 'wt')}\n`);
    expect(locate({ root: join(wt, 'lib') }, {}).root).toBe(wt);
  });

  it('without any marker, the start directory is the root', () => {
    const start = join(bareDir(), 'x', 'y');
    mkdirSync(start, { recursive: true });
    expect(locate({ root: start }, {}).root).toBe(start);
  });
});

describe('root precedence: --root, $CAIRN_ROOT, $CLAUDE_PROJECT_DIR, payload cwd, cwd', () => {
  function projects(n: number): string[] {
    return Array.from({ length: n }, () => realpathSync(tempProject({ init: false })));
  }

  it('takes each source only when the ones before it are absent', () => {
    const [flag, envRoot, claude, payload, cwd] = projects(5);
    const previous = process.cwd();
    process.chdir(cwd);
    try {
      const all = { CAIRN_ROOT: envRoot, CLAUDE_PROJECT_DIR: claude };
      expect(locate({ root: flag, payloadCwd: payload }, all).root).toBe(flag);
      expect(locate({ payloadCwd: payload }, all).root).toBe(envRoot);
      // Claude Code's payload cwd follows the agent's `cd`; its project directory is the session's
      expect(locate({ payloadCwd: payload }, { CLAUDE_PROJECT_DIR: claude }).root).toBe(claude);
      expect(locate({ payloadCwd: payload }, {}).root).toBe(payload);
      expect(locate({}, {}).root).toBe(cwd);
    } finally {
      process.chdir(previous);
    }
  });

  it('--dir / $CAIRN_DIR move the store and --project / $CAIRN_PROJECT name the project', () => {
    const [root] = projects(1);
    const shared = join(bareDir(), 'store');
    expect(locate({ root, dir: shared }, { CAIRN_DIR: '/elsewhere' }).dir).toBe(shared);
    expect(locate({ root }, { CAIRN_DIR: shared }).dir).toBe(shared);
    expect(locate({ root, project: 'flag' }, { CAIRN_PROJECT: 'env' }).project).toBe('flag');
    expect(locate({ root }, { CAIRN_PROJECT: 'env' }).project).toBe('env');
    expect(locate({ root }, {}).project).toMatch(/^[0-9a-f]{8,}$/);
  });

  it('the executables resolve the root the same way (cwd inside the project, $CAIRN_ROOT, --root)', () => {
    const [a, b] = projects(2);
    const sub = join(a, 'src');
    mkdirSync(sub);
    const created = (r: { stdout: string }) => JSON.parse(r.stdout).dir;
    expect(created(run('cairn', ['init', '--json'], { cwd: sub }))).toBe(join(a, '.cairn'));
    rmSync(join(a, '.cairn'), { recursive: true });
    expect(created(run('cairn', ['init', '--json'], { cwd: sub, env: { CAIRN_ROOT: b } }))).toBe(join(b, '.cairn'));
    rmSync(join(b, '.cairn'), { recursive: true });
    expect(created(run('cairn', ['init', '--root', a, '--json'], { cwd: sub, env: { CAIRN_ROOT: b } }))).toBe(join(a, '.cairn'));
  });
});

describe('normaliseRemoteUrl', () => {
  it.each([
    ['https://github.com/acme/ledgerly.git', 'github.com/acme/ledgerly'],
    ['https://user:s3cret@GitHub.com/acme/ledgerly.git', 'github.com/acme/ledgerly'],
    ['https://oauth2:tok@gitlab.example.com:8443/group/sub/ledgerly', 'gitlab.example.com/group/sub/ledgerly'],
    ['git@github.com:acme/ledgerly.git', 'github.com/acme/ledgerly'],
    ['git@GITHUB.COM:acme/ledgerly', 'github.com/acme/ledgerly'],
    ['github.com:acme/ledgerly.git', 'github.com/acme/ledgerly'],
    ['ssh://git@github.com:22/acme/ledgerly.git', 'github.com/acme/ledgerly'],
    ['ssh://git@github.com/acme/ledgerly.git/', 'github.com/acme/ledgerly'],
    ['git://github.com/acme/ledgerly.GIT', 'github.com/acme/ledgerly'],
    ['  https://github.com/acme/ledgerly.git\t', 'github.com/acme/ledgerly'],
  ])('%s → %s', (url, expected) => {
    expect(normaliseRemoteUrl(url)).toBe(expected);
  });

  it('keeps what distinguishes repositories: host, owner and name', () => {
    const base = normaliseRemoteUrl('https://github.com/acme/ledgerly.git');
    expect(normaliseRemoteUrl('https://github.com/acme/ledgerly-web.git')).not.toBe(base);
    expect(normaliseRemoteUrl('https://github.com/other/ledgerly.git')).not.toBe(base);
    expect(normaliseRemoteUrl('https://gitlab.com/acme/ledgerly.git')).not.toBe(base);
  });
});

describe('a stable identity (SPEC §1.2, amended)', () => {
  const addRemote = (root: string, url: string) => writeFileSync(join(root, '.git', 'config'), `[remote "origin"]\n\turl = ${url}\n`);

  it('the id recorded in the project’s own store wins over the derived one; --project and $CAIRN_PROJECT win over both', () => {
    const root = realpathSync(tempProject({ init: false }));
    const first = locate({ root }, {});
    expect(first.projectFrom).toBe('derived');
    initStore(first.dir);
    expect(recordProjectId(first)).toBe(first.project);
    addRemote(root, 'git@github.com:acme/ledgerly.git'); // the derived id changes; the memory must not
    expect(locate({ root }, {})).toMatchObject({ project: first.project, projectFrom: 'recorded' });
    expect(projectIdStatus(locate({ root }, {}))).toEqual({
      recorded: first.project,
      derived: projectIdFor(root),
      mismatch: true,
    });
    expect(locate({ root, project: 'flag' }, {})).toMatchObject({ project: 'flag', projectFrom: 'given' });
    expect(locate({ root }, { CAIRN_PROJECT: 'env' })).toMatchObject({ project: 'env', projectFrom: 'given' });
  });

  it('a store given with --dir may hold many projects: its recorded id is not theirs', () => {
    const root = realpathSync(tempProject({ init: false }));
    const shared = join(bareDir(), 'shared');
    initStore(shared);
    writeFileSync(join(shared, 'config.json'), JSON.stringify({ project: 'someone-else' }));
    const loc = locate({ root, dir: shared }, {});
    expect(loc).toMatchObject({ project: projectIdFor(root), projectFrom: 'derived', ownStore: false });
    expect(recordProjectId(loc)).toBeNull();
    expect(projectIdStatus(loc)).toMatchObject({ recorded: null, mismatch: false });
  });

  it('recording keeps every other setting, never replaces a recorded id, and refuses a config.json it cannot read', () => {
    const root = realpathSync(tempProject({ init: false }));
    const loc = locate({ root }, {});
    initStore(loc.dir);
    const config = join(loc.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ budgets: { adversarial: 900 } }));
    recordProjectId(loc);
    expect(JSON.parse(readFileSync(config, 'utf8'))).toEqual({ project: loc.project, budgets: { adversarial: 900 } });
    expect(recordProjectId({ ...loc, project: 'another' })).toBe(loc.project);
    expect(JSON.parse(readFileSync(config, 'utf8')).project).toBe(loc.project);

    writeFileSync(config, '{"budgets": ');
    expect(() => recordProjectId(loc)).toThrow(/config\.json is not valid JSON .*; the project id was not recorded/);
    expect(readFileSync(config, 'utf8')).toBe('{"budgets": ');
  });

  it('a typo in config.json never switches the project: the recorded id is still read, the problem recorded; with no id to read the store refuses', () => {
    const root = realpathSync(tempProject({ init: false }));
    expect(run('cairn', ['init', '--quiet'], { cwd: root }).code).toBe(0);
    const config = join(root, '.cairn', 'config.json');
    const recorded = JSON.parse(readFileSync(config, 'utf8')).project;
    expect(run('memory-capture', ['--bead', 'b1', '--text', 'LEARNED: retries need jitter'], { cwd: root }).code).toBe(0);
    addRemote(root, 'git@github.com:acme/r1.git'); // the derived id changes
    writeFileSync(config, `{"project": "${recorded}", "budgets": {"adversarial": 900,},}\n`); // a trailing comma

    expect(locate({ root }, {})).toMatchObject({ project: recorded, projectFrom: 'recorded' });
    const found = run('cairn', ['recall', 'retries', 'jitter'], { cwd: root });
    expect(found.stdout).toMatch(/retries need jitter/);
    expect(found.stderr).toMatch(/config\.json is not valid JSON/);
    expect(JSON.parse(readFileSync(join(root, '.cairn', 'cache', 'health.json'), 'utf8')).last_error).toMatch(
      /^config\.json: config\.json is not valid JSON/,
    );

    writeFileSync(config, '{"budgets": '); // nothing left to read the id from
    expect(locate({ root }, {}).projectFrom).toBe('unreadable');
    const refused = run('memory-capture', ['--bead', 'b2', '--text', 'LEARNED: timeouts need a budget'], { cwd: root });
    expect(refused).toMatchObject({ code: 0, stdout: '' });
    expect(refused.stderr).toMatch(/config\.json cannot be read, so the project id recorded in it is unknown/);
    expect(readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')).not.toMatch(/timeouts/);

    writeFileSync(config, JSON.stringify({ project: recorded }));
    expect(run('memory-capture', ['--bead', 'b2', '--text', 'LEARNED: timeouts need a budget'], { cwd: root }).stderr).toMatch(
      /^cairn memory-capture: captured /,
    );
    expect(readFileSync(join(root, '.cairn', 'memory', 'knowledge.jsonl'), 'utf8')).toMatch(
      new RegExp(`"project":"${recorded}".*timeouts|timeouts.*"project":"${recorded}"`),
    );
    expect(existsSync(join(root, '.cairn', 'cache', 'health.json'))).toBe(false); // what failed succeeded: cleared
  });

  it('cairn init records the id and says when the derived one no longer matches it', () => {
    const root = realpathSync(tempProject({ init: false }));
    expect(run('cairn', ['init', '--quiet'], { cwd: root }).code).toBe(0);
    const recorded = JSON.parse(readFileSync(join(root, '.cairn', 'config.json'), 'utf8')).project;
    expect(recorded).toBe(projectIdFor(root));
    addRemote(root, 'https://github.com/acme/ledgerly.git');
    const again = run('cairn', ['init', '--quiet'], { cwd: root });
    expect(again.stderr).toBe(
      `cairn init: the recorded project id ${recorded} differs from the one derived here (${projectIdFor(root)}: the directory moved or the remote changed); the recorded one is kept\n`,
    );
    expect(JSON.parse(readFileSync(join(root, '.cairn', 'config.json'), 'utf8')).project).toBe(recorded);
  });
});

describe('the first write creates the store (SPEC §1.2, amended)', () => {
  const text = '## Accumulated Patterns\n- Every migration must be reversible before it is merged\n';

  it('store-deliberation in a git work tree without .cairn/ creates it as cairn init would, and stores', () => {
    const root = realpathSync(tempProject({ init: false }));
    const r = run('store-deliberation', ['--role', 'auditor', '--json'], { cwd: root, input: text });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`^cairn store-deliberation: created the store ${join(root, '.cairn')} \\(commit it: git add \\.cairn\\)\n`),
    );
    expect(JSON.parse(r.stdout).patterns).toHaveLength(1);
    expect(readFileSync(join(root, '.cairn', '.gitignore'), 'utf8')).toContain('cache/');
    expect(readFileSync(join(root, '.cairn', '.gitattributes'), 'utf8')).toContain('events.jsonl merge=union');
    expect(JSON.parse(readFileSync(join(root, '.cairn', 'config.json'), 'utf8')).project).toBe(projectIdFor(root));
  });

  it('outside a git work tree, or for a --dir store that is not there, nothing is created', () => {
    const plain = bareDir();
    const r = run('store-deliberation', ['--role', 'auditor'], { cwd: plain, input: text });
    expect(r.stderr).toMatch(/skipped \(pipeline continues\): no cairn store at/);
    expect(readdirSync(plain)).toEqual([]);
    const root = realpathSync(tempProject({ init: false }));
    const missing = join(bareDir(), 'store');
    expect(run('store-deliberation', ['--role', 'auditor', '--dir', missing], { cwd: root, input: text }).stderr).toMatch(
      /no cairn store at/,
    );
    expect(readdirSync(root)).toEqual(['.git']);
  });
});
