import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPathBounded, readSmallFile } from '../lib/io/read.js';
import { commandLinePath } from '../lib/cli/input.js';
import { CairnError } from '../lib/core/errors.js';
import { tempProject } from './helpers.js';

// The one bounded reader (SPEC §2): a byte cap applied while reading and a time limit, for files,
// pipes and devices alike; never a read that blocks the thread.

const LIMITS = { cap: 64 * 1024, waitMs: 200 };

async function failure(work: Promise<unknown> | (() => unknown)): Promise<CairnError> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (err) {
    expect(err).toBeInstanceOf(CairnError);
    return err as CairnError;
  }
  throw new Error('expected a CairnError');
}

function fifo(root: string): string {
  const path = join(root, 'fifo');
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  return path;
}

describe('readPathBounded', () => {
  it('reads a regular file whole, and stops at the cap with the rest left unread', async () => {
    const root = tempProject({ init: false });
    writeFileSync(join(root, 'small.md'), 'hello');
    expect(await readPathBounded(join(root, 'small.md'), LIMITS, 'x')).toEqual({
      bytes: Buffer.from('hello'),
      truncated: false,
      timedOut: false,
    });
    writeFileSync(join(root, 'big.md'), Buffer.alloc(LIMITS.cap * 3, 0x61));
    const big = await readPathBounded(join(root, 'big.md'), LIMITS, 'x');
    expect(big.bytes.length).toBe(LIMITS.cap);
    expect(big.truncated).toBe(true);
  });

  it.each(['/dev/zero', '/dev/urandom'])('%s, which never ends, is cut at the cap while it is read', async (device) => {
    const started = Date.now();
    const read = await readPathBounded(device, LIMITS, device);
    expect(read.bytes.length).toBe(LIMITS.cap);
    expect(read.truncated).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a FIFO without a writer ends at the wait, with nothing read', async () => {
    const started = Date.now();
    const read = await readPathBounded(fifo(tempProject({ init: false })), LIMITS, '--file fifo');
    expect(read).toEqual({ bytes: Buffer.alloc(0), truncated: false, timedOut: true });
    expect(Date.now() - started).toBeLessThan(LIMITS.waitMs + 2000);
  });

  it('a pipe whose writer sends a little and stays open: what arrived is kept', async () => {
    const path = fifo(tempProject({ init: false }));
    const writer = openSync(path, constants.O_RDWR); // on Linux a FIFO opens read-write without waiting
    try {
      writeFileSync(writer, 'partial text');
      const read = await readPathBounded(path, LIMITS, '--file fifo');
      expect(read).toEqual({ bytes: Buffer.from('partial text'), truncated: false, timedOut: true });
    } finally {
      closeSync(writer);
    }
  });

  it('names the path and says what is wrong with it', async () => {
    const root = tempProject({ init: false });
    expect((await failure(readPathBounded(join(root, '.git'), LIMITS, '--file .git'))).message).toBe(
      'cannot read --file .git: it is a directory',
    );
    expect((await failure(readPathBounded(join(root, 'missing.md'), LIMITS, '--file missing.md'))).message).toBe(
      'cannot read --file missing.md: no such file',
    );
  });
});

describe('readSmallFile', () => {
  it('is undefined for a missing file and refuses what is not a regular file, without waiting on it', () => {
    const root = tempProject({ init: false });
    expect(readSmallFile(join(root, 'none.json'), 1024)).toBeUndefined();
    const started = Date.now();
    expect(() => readSmallFile(fifo(root), 1024)).toThrow(/fifo is not a regular file/);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(() => readSmallFile('/dev/zero', 1024)).toThrow(/is not a regular file/);
    writeFileSync(join(root, 'big.json'), Buffer.alloc(2048, 0x20));
    expect(() => readSmallFile(join(root, 'big.json'), 1024)).toThrow(/big\.json is larger than 1024 bytes/);
  });

  it('with noFollow, refuses a symbolic link instead of reading its target', () => {
    const root = tempProject({ init: false });
    writeFileSync(join(root, 'secret.txt'), 'AWS_SECRET=abc\n');
    symlinkSync(join(root, 'secret.txt'), join(root, 'link'));
    expect(readSmallFile(join(root, 'link'), 1024)?.toString()).toBe('AWS_SECRET=abc\n');
    expect(() => readSmallFile(join(root, 'link'), 1024, true)).toThrow(/link is a symbolic link; cairn never writes through one/);
  });
});

describe('commandLinePath (SPEC §2: paths from input stay inside the project root)', () => {
  it('keeps a relative path inside the root, links followed; an absolute path is the caller’s choice', () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, 'notes'));
    writeFileSync(join(root, 'notes', 'a.md'), 'x');
    symlinkSync('/etc', join(root, 'notes', 'etc'));
    const previous = process.cwd();
    process.chdir(join(root, 'notes'));
    try {
      expect(commandLinePath('a.md', root, '--file a.md')).toBe(join(root, 'notes', 'a.md'));
      expect(() => commandLinePath('../../../../etc/passwd', root, '--file ../../../../etc/passwd')).toThrow(
        /--file \.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd leads outside the project root .* \(a relative path must stay inside it; give an absolute path for a file elsewhere\)/,
      );
      expect(() => commandLinePath('etc/passwd', root, '--file etc/passwd')).toThrow(/leads outside the project root/); // through a link
      expect(commandLinePath('/etc/passwd', root, '--file /etc/passwd')).toBe('/etc/passwd');
    } finally {
      process.chdir(previous);
    }
  });
});
