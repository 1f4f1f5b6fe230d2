import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, lutimesSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { acquireLock } from '../lib/io/lock.js';
import { Deadline } from '../lib/core/deadline.js';
import { CairnError } from '../lib/core/errors.js';
import { tempProject } from './helpers.js';

// The advisory lock (SPEC §2): whatever sits at the lock path, a writer takes the lock or gives up
// by its deadline with a message that says what is there; it never spins, never follows a link.

function target(): string {
  return join(tempProject({ init: false }), 'events.jsonl');
}

/** Acquire with a short deadline; the error it ends with, and how long it took. */
function giveUp(path: string): { err: CairnError; ms: number } {
  const started = Date.now();
  try {
    acquireLock(path, new Deadline(150)).release();
  } catch (err) {
    expect(err).toBeInstanceOf(CairnError);
    expect((err as CairnError).kind).toBe('lock');
    return { err: err as CairnError, ms: Date.now() - started };
  }
  throw new Error('the lock was taken');
}

/** Make a path look `minutes` old. */
const age = (path: string, minutes: number) => {
  const t = new Date(Date.now() - minutes * 60_000);
  utimesSync(path, t, t);
};

describe('acquireLock for a command a person runs (no deadline)', () => {
  it('gives up on a live holder within a second, naming it; waits out an empty lock until it is stale, then takes it', () => {
    const person = () => new Deadline(0, undefined, true);
    const held = target();
    writeFileSync(`${held}.lock`, `${process.pid} ${hostname()} ${Date.now()}\n`);
    const started = Date.now();
    expect(() => acquireLock(held, person())).toThrow(
      new RegExp(`is held by another process \\(pid ${process.pid} on .*; gave up after \\d+ ms`),
    );
    expect(Date.now() - started).toBeLessThan(3000); // 0.8 s of waiting, not the 10 s of maintenance
    const torn = target();
    writeFileSync(`${torn}.lock`, ''); // its holder died between creating and writing it
    acquireLock(torn, person()).release();
    expect(existsSync(`${torn}.lock`)).toBe(false);
  });
});

describe('acquireLock', () => {
  it('takes a free lock and releases it', () => {
    const path = target();
    const lock = acquireLock(path, new Deadline(1000));
    expect(readFileSync(`${path}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} ${hostname()} \\d+\\n$`));
    lock.release();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('a directory at the lock path (the shell idiom `mkdir x.lock`) is waited for until the deadline, then named', () => {
    const path = target();
    mkdirSync(`${path}.lock`);
    const { err, ms } = giveUp(path);
    expect(err.message).toMatch(/^lock .*events\.jsonl\.lock is a directory, not a cairn lock \(a `mkdir` lock\?\); gave up after \d+ ms$/);
    expect(ms).toBeLessThan(2000);
    expect(lstatSync(`${path}.lock`).isDirectory()).toBe(true); // a fresh one is someone's: left alone
  });

  it('an empty directory lock older than the stale age is removed; a non-empty one never is', () => {
    const path = target();
    mkdirSync(`${path}.lock`);
    age(`${path}.lock`, 10);
    acquireLock(path, new Deadline(1000)).release();

    mkdirSync(`${path}.lock`);
    writeFileSync(join(`${path}.lock`, 'owner'), 'a script\n');
    age(`${path}.lock`, 10);
    expect(giveUp(path).err.message).toMatch(/is a directory, not a cairn lock \(a `mkdir` lock\? it is not empty and is never removed\)/);
    expect(readFileSync(join(`${path}.lock`, 'owner'), 'utf8')).toBe('a script\n');
  });

  it('a dangling link at the lock path is never followed, and named when the deadline passes', () => {
    const path = target();
    const nowhere = join(path, '..', 'nowhere');
    symlinkSync(nowhere, `${path}.lock`);
    const { err, ms } = giveUp(path);
    expect(err.message).toMatch(/is a symbolic link, not a cairn lock \(remove it if no process uses it\); gave up after/);
    expect(ms).toBeLessThan(2000);
    expect(existsSync(nowhere)).toBe(false);
  });

  it('an old link is removed (the link, not what it points at) and the lock taken', () => {
    const path = target();
    const victim = join(path, '..', 'victim.txt');
    writeFileSync(victim, 'keep\n');
    symlinkSync(victim, `${path}.lock`);
    const old = new Date(Date.now() - 10 * 60_000);
    lutimesSync(`${path}.lock`, old, old); // the link's own time, not its target's
    acquireLock(path, new Deadline(1000)).release();
    expect(readFileSync(victim, 'utf8')).toBe('keep\n');
  });

  it('a lock file that is not cairn’s is described by what it holds, not as a pid', () => {
    const path = target();
    writeFileSync(`${path}.lock`, 'garbage');
    expect(giveUp(path).err.message).toMatch(/lock .*events\.jsonl\.lock holds "garbage", not a cairn lock; gave up after/);
  });

  it('a lock left by a process that died on this host is broken at once', () => {
    const path = target();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    writeFileSync(`${path}.lock`, `${dead} ${hostname()} ${Date.now()}\n`);
    acquireLock(path, new Deadline(1000)).release();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
