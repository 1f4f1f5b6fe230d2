import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { appendLines } from '../lib/io/jsonl.js';
import { journalPath, rotate, rotateIfDue } from '../lib/knowledge/rotate.js';
import { Deadline } from '../lib/core/deadline.js';
import { REPO, run, tempProject } from './helpers.js';

// Rotation (SPEC §4.5): the oldest lines move to the archive so the newest stay; journalled so that
// a run killed at any point is finished by the next, never losing or doubling an entry.

const NO_DEADLINE = new Deadline(0);
const line = (i: number) =>
  JSON.stringify({
    key: `fact-n${i}`,
    type: 'fact',
    content: `note ${i}`,
    source: 'test',
    tags: ['fact'],
    ts: 1_700_000_000 + i,
    bead: 'b',
  });

function memory(root: string) {
  const dir = join(root, '.cairn', 'memory');
  mkdirSync(dir, { recursive: true });
  return {
    log: join(dir, 'knowledge.jsonl'),
    archive: join(dir, 'knowledge.archive.jsonl'),
    within: join(root, '.cairn'),
  };
}
/** The entries of a log, in order. A kill inside an append may leave one torn line (SPEC §2): it is no entry, and is counted apart. */
function entries(path: string): { ids: number[]; torn: number } {
  const out = { ids: [] as number[], torn: 0 };
  if (!existsSync(path)) return out;
  for (const l of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    try {
      out.ids.push(Number(JSON.parse(l).key.slice('fact-n'.length)));
    } catch {
      out.torn++;
    }
  }
  return out;
}
const ids = (path: string) => entries(path).ids;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('rotate', () => {
  it('moves the oldest lines so the newest stay, and only when the log is over the limit', () => {
    const { log, archive, within } = memory(tempProject());
    writeFileSync(
      log,
      range(0, 12)
        .map((i) => line(i) + '\n')
        .join(''),
    );
    expect(rotate(log, archive, { deadline: NO_DEADLINE, within, above: 12, keep: 5 })).toEqual({
      moved: 0,
      kept: 12,
      recovered: 0,
    });
    writeFileSync(
      log,
      range(0, 13)
        .map((i) => line(i) + '\n')
        .join('') + '{"torn":',
    );
    expect(rotate(log, archive, { deadline: NO_DEADLINE, within, above: 12, keep: 5 })).toEqual({
      moved: 8,
      kept: 5,
      recovered: 0,
    });
    expect(ids(archive)).toEqual(range(0, 8));
    expect(readFileSync(log, 'utf8')).toBe(
      range(8, 13)
        .map((i) => line(i) + '\n')
        .join('') + '{"torn":',
    ); // the torn tail stays for the next append
    expect(existsSync(journalPath(log))).toBe(false);
  });

  it('is cheap when not due: a small log is not read', () => {
    const { log, archive, within } = memory(tempProject());
    writeFileSync(log, line(1) + '\n');
    expect(rotateIfDue(log, archive, { deadline: NO_DEADLINE, within })).toBeUndefined();
  });

  it('remembers the count it read: a log grown by fewer bytes than lines could fill is not read again', () => {
    const { log, archive, within } = memory(tempProject());
    const countFile = join(within, 'cache', 'knowledge-lines.json');
    const opts = { deadline: NO_DEADLINE, within, countFile, above: 12, keep: 5 };
    writeFileSync(
      log,
      range(0, 12)
        .map((i) => line(i) + '\n')
        .join(''),
    );
    expect(rotateIfDue(log, archive, opts)).toEqual({ moved: 0, kept: 12, recovered: 0 }); // read and counted
    expect(JSON.parse(readFileSync(countFile, 'utf8'))).toEqual({ size: statSync(log).size, lines: 12 });
    // a count that says there is room: the log is taken at its word (a line is 40 bytes at least)
    writeFileSync(countFile, JSON.stringify({ size: statSync(log).size, lines: 3 }));
    appendFileSync(log, line(12) + '\n');
    expect(rotateIfDue(log, archive, opts)).toBeUndefined();
    expect(ids(log)).toHaveLength(13);
    // grown by more than the room left could hold: read, and rotated
    appendFileSync(
      log,
      range(13, 20)
        .map((i) => line(i) + '\n')
        .join(''),
    );
    expect(rotateIfDue(log, archive, opts)).toEqual({ moved: 15, kept: 5, recovered: 0 });
    expect(JSON.parse(readFileSync(countFile, 'utf8'))).toEqual({ size: statSync(log).size, lines: 5 });
    // a log that shrank (rotated elsewhere, rewritten) is read again
    writeFileSync(
      log,
      range(0, 13)
        .map((i) => line(i) + '\n')
        .join(''),
    );
    writeFileSync(countFile, JSON.stringify({ size: statSync(log).size + 1, lines: 0 }));
    expect(rotateIfDue(log, archive, opts)).toMatchObject({ moved: 8, kept: 5 });
  });

  // The three points a rotation can be killed at, rebuilt by hand: the journal written; the archive
  // appended too; the log rewritten too. The next rotation finishes each the same way.
  it.each([
    ['after writing the journal', { archived: false, rewritten: false }],
    ['after appending to the archive', { archived: true, rewritten: false }],
    ['after rewriting the log', { archived: true, rewritten: true }],
  ])('killed %s: the next run finishes the move exactly once', (_point, state) => {
    const { log, archive, within } = memory(tempProject());
    const all = range(0, 10);
    writeFileSync(archive, line(100) + '\n');
    writeFileSync(log, all.map((i) => line(i) + '\n').join(''));
    const moved = range(0, 6)
      .map((i) => line(i) + '\n')
      .join('');
    writeFileSync(journalPath(log), `${JSON.stringify({ inode: statSync(log).ino })}\n${moved}`);
    if (state.archived) appendLines(archive, () => range(0, 6).map(line), { deadline: NO_DEADLINE, within });
    if (state.rewritten) {
      writeFileSync(
        `${log}.new`,
        range(6, 10)
          .map((i) => line(i) + '\n')
          .join(''),
      );
      renameSync(`${log}.new`, log);
    }
    const report = rotate(log, archive, { deadline: NO_DEADLINE, within, above: 100 });
    expect(report.recovered).toBe(6);
    expect(ids(archive)).toEqual([100, ...range(0, 6)]);
    expect(ids(log)).toEqual(range(6, 10));
    expect(existsSync(journalPath(log))).toBe(false);
  });

  it('killed inside the append to the archive: the part appended is cut off and the move made once, with no torn line left', () => {
    const { log, archive, within } = memory(tempProject());
    writeFileSync(archive, line(100) + '\n');
    writeFileSync(
      log,
      range(0, 10)
        .map((i) => line(i) + '\n')
        .join(''),
    );
    const moved = range(0, 6)
      .map((i) => line(i) + '\n')
      .join('');
    writeFileSync(journalPath(log), `${JSON.stringify({ inode: statSync(log).ino, archiveSize: statSync(archive).size })}\n${moved}`);
    appendFileSync(archive, moved.slice(0, moved.indexOf(line(3)) + 17)); // three lines and the start of a fourth
    expect(rotate(log, archive, { deadline: NO_DEADLINE, within, above: 100 }).recovered).toBe(6);
    expect(entries(archive)).toEqual({ ids: [100, ...range(0, 6)], torn: 0 });
    expect(ids(log)).toEqual(range(6, 10));
  });

  it('killed at random moments, a handful of times, never loses or doubles an entry', async () => {
    const root = tempProject();
    const { log, archive, within } = memory(root);
    // A child that appends numbered entries, 200 at a time, and rotates whenever the log passes 1000
    // lines, forever: most of its time is spent inside a rotation, so that is where the kills land.
    const child = `
      const { appendLines } = await import(${JSON.stringify(join(REPO, 'dist', 'lib', 'io', 'jsonl.js'))});
      const { rotate } = await import(${JSON.stringify(join(REPO, 'dist', 'lib', 'knowledge', 'rotate.js'))});
      const { Deadline } = await import(${JSON.stringify(join(REPO, 'dist', 'lib', 'core', 'deadline.js'))});
      const { readFileSync, existsSync } = await import('node:fs');
      const [log, archive, within] = process.argv.slice(1);
      const d = new Deadline(0);
      const opts = { deadline: d, within };
      const count = (p) => existsSync(p) ? readFileSync(p, 'utf8').split('\\n').filter((l) => { try { return JSON.parse(l); } catch { return false; } }).length : 0;
      let next = count(log) + count(archive);
      const line = ${line.toString()};
      process.stdout.write('ready\\n');
      for (;;) {
        const batch = Array.from({ length: 200 }, (_, i) => line(next + i));
        appendLines(log, () => batch, opts);
        next += batch.length;
        rotate(log, archive, { ...opts, above: 1000, keep: 300 });
      }`;
    const seeded = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const random = seeded(9);
    let recovered = 0;
    // at least six kills, and more until one has landed inside a rotation (where it lands is timing)
    for (let round = 0; round < 6 || (recovered === 0 && round < 40); round++) {
      const proc = spawn(process.execPath, ['--input-type=module', '-e', child, log, archive, within], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise((resolve) => proc.stdout.once('data', resolve));
      await new Promise((resolve) => setTimeout(resolve, 30 + random() * 200));
      proc.kill('SIGKILL');
      await new Promise((resolve) => proc.once('exit', resolve));
      // the dead child's lock is broken, and whatever it cut short is finished
      recovered += rotate(log, archive, { deadline: NO_DEADLINE, within, above: 1000, keep: 300 }).recovered;
      const [archived, kept] = [entries(archive), entries(log)];
      const seen = [...archived.ids, ...kept.ids];
      expect(seen.length).toBeGreaterThan(round * 200);
      expect(seen).toEqual(range(0, seen.length)); // contiguous, in order: nothing lost, nothing doubled
      expect(archived.torn + kept.torn).toBeLessThanOrEqual(round + 1); // at most one torn line per kill
    }
    expect(recovered).toBeGreaterThan(0); // some kill did land inside a rotation
  });
});

describe('cairn rotate', () => {
  it('rotates a log of 5001 lines to 2500 and gzips artifacts older than --older-than', () => {
    const root = tempProject();
    const { log, archive } = memory(root);
    writeFileSync(
      log,
      range(0, 5001)
        .map((i) => line(i) + '\n')
        .join(''),
    );
    const artifacts = join(root, '.cairn', 'artifacts', 'deliberations');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, 'old.md'), 'old deliberation\n'.repeat(50));
    writeFileSync(join(artifacts, 'new.md'), 'new deliberation\n');
    const longAgo = Date.now() / 1000 - 100 * 86400;
    utimesSync(join(artifacts, 'old.md'), longAgo, longAgo);

    const r = run('cairn', ['rotate', '--json', '--strict'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ moved: 2501, kept: 2500, recovered: 0, artifacts: { compacted: 1 } });
    expect(ids(archive)).toEqual(range(0, 2501));
    expect(ids(log)).toEqual(range(2501, 5001));
    expect(gunzipSync(readFileSync(join(artifacts, 'old.md.gz'))).toString()).toBe('old deliberation\n'.repeat(50));
    expect(existsSync(join(artifacts, 'old.md'))).toBe(false);
    expect(existsSync(join(artifacts, 'new.md'))).toBe(true);
  });
});
