import { describe, it, expect, afterEach } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locate, normaliseRemoteUrl } from '../lib/store/root.js';
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

describe('root precedence: --root, $CAIRN_ROOT, payload cwd, $CLAUDE_PROJECT_DIR, cwd', () => {
  function projects(n: number): string[] {
    return Array.from({ length: n }, () => realpathSync(tempProject({ init: false })));
  }

  it('takes each source only when the ones before it are absent', () => {
    const [flag, envRoot, payload, claude, cwd] = projects(5);
    const previous = process.cwd();
    process.chdir(cwd);
    try {
      const all = { CAIRN_ROOT: envRoot, CLAUDE_PROJECT_DIR: claude };
      expect(locate({ root: flag, payloadCwd: payload }, all).root).toBe(flag);
      expect(locate({ payloadCwd: payload }, all).root).toBe(envRoot);
      expect(locate({ payloadCwd: payload }, { CLAUDE_PROJECT_DIR: claude }).root).toBe(payload);
      expect(locate({}, { CLAUDE_PROJECT_DIR: claude }).root).toBe(claude);
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
