import { describe, it, expect } from 'vitest';
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdirNoFollow } from '../lib/io/safe.js';
import { writeFileAtomic } from '../lib/io/atomic.js';
import { appendLines } from '../lib/io/jsonl.js';
import { Deadline } from '../lib/core/deadline.js';
import { tempProject } from './helpers.js';

// Never through a symbolic link (SPEC §2): a clone can carry committed links inside .cairn/, so
// every write names the directory it stays inside, and nothing from there down may be a link.

function store(): { root: string; dir: string } {
  const root = tempProject({ init: false });
  return { root, dir: join(root, '.cairn') };
}

describe('mkdirNoFollow', () => {
  it('creates the directories that are missing, the one it stays inside included', () => {
    const { dir } = store();
    mkdirNoFollow(dir, join(dir, 'artifacts', 'deliberations'));
    expect(lstatSync(join(dir, 'artifacts', 'deliberations')).isDirectory()).toBe(true);
    mkdirNoFollow(dir, join(dir, 'artifacts', 'deliberations')); // again: nothing to do
  });

  it('never makes the parents of the one it stays inside: a project removed meanwhile stays removed', () => {
    const { root } = store();
    const gone = join(root, 'worktree', '.cairn');
    expect(() => mkdirNoFollow(gone, join(gone, 'cache'))).toThrow(/cannot create .*worktree\/\.cairn/);
    expect(readdirSync(root)).toEqual(['.git']);
  });

  it('refuses a link at any level, the store directory itself included, and creates nothing beyond it', () => {
    const { root, dir } = store();
    const outside = join(root, 'outside');
    mkdirSync(outside);
    mkdirSync(dir);
    symlinkSync(outside, join(dir, 'artifacts'));
    expect(() => mkdirNoFollow(dir, join(dir, 'artifacts', 'deliberations'))).toThrow(
      /\.cairn\/artifacts is a symbolic link; cairn never writes through one/,
    );
    expect(readdirSync(outside)).toEqual([]);

    const linked = join(root, 'linked-store');
    symlinkSync(outside, linked);
    expect(() => mkdirNoFollow(linked, join(linked, 'cache'))).toThrow(/linked-store is a symbolic link/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a file where a directory should be, and a path outside the directory it names', () => {
    const { dir } = store();
    mkdirSync(dir);
    writeFileSync(join(dir, 'cache'), 'not a directory');
    expect(() => mkdirNoFollow(dir, join(dir, 'cache'))).toThrow(/\.cairn\/cache is not a directory/);
    expect(() => mkdirNoFollow(dir, join(dir, '..', 'elsewhere'))).toThrow(/is outside/);
  });
});

describe('writeFileAtomic', () => {
  it('replaces a link at the path with the file instead of writing into its target', () => {
    const { root, dir } = store();
    mkdirSync(dir);
    writeFileSync(join(root, 'victim.txt'), 'precious\n');
    symlinkSync(join(root, 'victim.txt'), join(dir, 'health.json'));
    writeFileAtomic(join(dir, 'health.json'), '{}\n', dir);
    expect(readFileSync(join(root, 'victim.txt'), 'utf8')).toBe('precious\n');
    expect(lstatSync(join(dir, 'health.json')).isFile()).toBe(true);
    expect(readdirSync(dir)).toEqual(['health.json']); // no temp file left behind
  });

  it('never writes below a linked directory', () => {
    const { root, dir } = store();
    mkdirSync(dir);
    mkdirSync(join(root, 'outside'));
    symlinkSync(join(root, 'outside'), join(dir, 'artifacts'));
    expect(() => writeFileAtomic(join(dir, 'artifacts', 'deliberations', 'd1.md'), 'text', dir)).toThrow(/artifacts is a symbolic link/);
    expect(readdirSync(join(root, 'outside'))).toEqual([]);
  });
});

describe('appendLines', () => {
  it('never appends below a linked directory of the store', () => {
    const { root, dir } = store();
    mkdirSync(dir);
    mkdirSync(join(root, 'outside'));
    symlinkSync(join(root, 'outside'), join(dir, 'memory'));
    expect(() =>
      appendLines(join(dir, 'memory', 'knowledge.jsonl'), () => ['{"n":1}'], {
        deadline: new Deadline(1000),
        within: dir,
      }),
    ).toThrow(/memory is a symbolic link/);
    expect(readdirSync(join(root, 'outside'))).toEqual([]);
  });
});
