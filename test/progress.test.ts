import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { progressLine, progressText } from '../lib/cli/progress.js';
import { REPO, binPath, cleanEnv, run, tempProject } from './helpers.js';

// The progress line of long work: drawn in place on a terminal, nothing at all elsewhere (hooks, cron
// and CI read stderr as a log).

function terminal(opts: { columns?: number; failing?: boolean } = {}) {
  const written: string[] = [];
  return {
    written,
    stream: {
      isTTY: true,
      columns: opts.columns,
      write(text: string) {
        if (opts.failing) throw new Error('EIO');
        written.push(text);
      },
    },
  };
}

describe('progressText', () => {
  it('says count, total, share, rate and time left', () => {
    expect(progressText('cairn rebuild: replaying events', 25_000, 100_000, 2_000)).toBe(
      'cairn rebuild: replaying events 25,000 / 100,000 (25%) · 12,500/s · 6 s left',
    );
  });

  it('counts bytes in MB, and minutes when the rest takes longer', () => {
    expect(progressText('cairn report: reading events', 1_000_000, 100_000_000, 1_000, true)).toBe(
      'cairn report: reading events 1.0 MB / 100.0 MB (1%) · 1.0 MB/s · 1 min 39 s left',
    );
  });

  it('says no rate before any work is done', () => {
    expect(progressText('x', 0, 10, 5_000)).toBe('x 0 / 10 (0%)');
  });
});

describe('progressLine', () => {
  it('writes nothing when the stream is not a terminal', () => {
    const written: string[] = [];
    const line = progressLine('x', {
      stream: { isTTY: false, write: (t: string) => written.push(t) },
      delayMs: 0,
      everyMs: 0,
    });
    line.update(1, 2);
    line.end();
    expect(written).toEqual([]);
  });

  it('on a terminal: waits out the delay, redraws in place at most every interval, and clears the line at the end', () => {
    let now = 0;
    const { stream, written } = terminal();
    const line = progressLine('cairn x: working', { stream, now: () => now, delayMs: 500, everyMs: 100 });
    line.update(10, 100); // before the delay: quick work shows nothing
    now = 600;
    line.update(60, 100);
    now = 650;
    line.update(65, 100); // within the interval: not redrawn
    now = 700;
    line.update(70, 100);
    line.end();
    line.update(80, 100); // after the end: nothing more
    expect(written).toEqual([
      '\r\x1b[Kcairn x: working 60 / 100 (60%) · 100/s · 1 s left',
      '\r\x1b[Kcairn x: working 70 / 100 (70%) · 100/s · 1 s left',
      '\r\x1b[K',
    ]);
  });

  it('never writes past the terminal width', () => {
    let now = 1_000;
    const { stream, written } = terminal({ columns: 20 });
    const line = progressLine('cairn rebuild: replaying events', { stream, now: () => now, delayMs: 0, everyMs: 0 });
    line.update(5, 10);
    now++;
    expect(written[0]).toBe('\r\x1b[K' + 'cairn rebuild: repl');
  });

  it('a terminal that fails to write stops the line, never the work', () => {
    const { stream } = terminal({ failing: true });
    const line = progressLine('x', { stream, delayMs: 0, everyMs: 0 });
    expect(() => {
      line.update(1, 2);
      line.update(2, 2);
      line.end();
    }).not.toThrow();
  });
});

describe('a long command', () => {
  // a log long enough for a replay to outlast the line's delay on any machine
  async function bigStore(): Promise<string> {
    const dir = tempProject();
    const { writeEventLog } = await import(join(REPO, 'bench', 'stores.js'));
    writeEventLog(join(dir, '.cairn', 'events.jsonl'), {
      patterns: { auditor: 12_000 },
      nowMs: Date.parse('2026-04-20T10:00:00Z'),
      seed: 3,
    });
    return dir;
  }

  it('cairn rebuild draws its progress on a terminal and clears it before its closing line', async () => {
    const dir = await bigStore();
    // `script` gives the command a pseudo-terminal for stdout and stderr, as a person's shell does
    const r = spawnSync('script', ['-qec', `${process.execPath} ${binPath('cairn')} rebuild --project benchproject0001`, '/dev/null'], {
      cwd: dir,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/\r\x1b\[Kcairn rebuild: replaying events [\d,]+ \/ [\d,]+ \(\d+%\) · [\d,]+\/s · \d+ s left/);
    expect(r.stdout).toMatch(/\r\x1b\[Kcairn rebuild: replayed \d+ events/);
  }, 60_000);

  it('prints no progress when stderr is not a terminal (a hook, cron, CI)', async () => {
    const dir = await bigStore();
    const r = run('cairn', ['rebuild', '--project', 'benchproject0001'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).not.toContain('replaying events');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);
});
