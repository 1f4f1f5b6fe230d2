import { describe, it, expect, afterAll } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { createRequire } from 'node:module';
import { packageWithBrokenModules, run, tempProject } from './helpers.js';

// The bundles' loader (tools/load.cjs): each command's bundle runs with a V8 code cache kept beside it,
// written after a run; a stale or damaged cache is refused by V8 and written again; a package that
// cannot be written still runs.

const pkg = packageWithBrokenModules([]);
afterAll(() => rmSync(pkg, { recursive: true, force: true }));
const cacheOf = (name: string) => join(pkg, 'dist', 'bin', 'cache', `${name}.bin`);
const recall = (root: string) => run('cairn', ['recall', '--recent', '1'], { cwd: root, entry: join(pkg, 'bin', 'cairn.js') });

/** Does V8 take this cache for the bundle as it is now? */
function accepted(name: string): boolean {
  const Module = createRequire(import.meta.url)('node:module') as { wrap(source: string): string };
  const file = join(pkg, 'dist', 'bin', `${name}.cjs`);
  return !new Script(Module.wrap(readFileSync(file, 'utf8')), {
    filename: file,
    cachedData: readFileSync(cacheOf(name)),
  }).cachedDataRejected;
}

describe('the code cache of the bundles', () => {
  it('is written after a run, for the command and for `cairn` that dispatched it, and V8 takes it', () => {
    rmSync(join(pkg, 'dist', 'bin', 'cache'), { recursive: true, force: true });
    const root = tempProject();
    expect(recall(root).code).toBe(0);
    expect(accepted('cairn')).toBe(true);
    expect(accepted('recall')).toBe(true);
  });

  it('a damaged cache is refused, the command runs as before, and the cache is written again', () => {
    const root = tempProject();
    const before = recall(root);
    writeFileSync(cacheOf('recall'), 'not a code cache');
    expect(recall(root)).toEqual(before);
    expect(accepted('recall')).toBe(true);
  });

  it('a package that cannot be written runs without one', () => {
    const root = tempProject();
    const before = recall(root);
    const dir = join(pkg, 'dist', 'bin', 'cache');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    chmodSync(dir, 0o500);
    try {
      expect(recall(root)).toEqual(before);
      if (process.getuid?.() !== 0) expect(existsSync(cacheOf('recall'))).toBe(false); // root writes anyway
    } finally {
      chmodSync(dir, 0o700);
    }
  });
});
