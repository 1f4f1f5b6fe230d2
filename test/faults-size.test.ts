import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, cleanEnv, tempProject } from './helpers.js';

// A knowledge log far past what rotation keeps is read a line at a time (issue 27): `cairn rotate`,
// `sanitize` and `curate` on a log several times the size of their JavaScript heap still finish.
// Each runs as a process under `node --max-old-space-size=16`, where the versions that read the log
// whole ran out of memory (a million lines took them 1 to 1.9 GB); their figures at a million lines
// are in bench/README.md ("Whole-log passes at a million knowledge lines").

const HEAP_MB = '16';
const line = (i: number, content = `note ${i}: the ledger totals are computed in cents for tenant ${i % 97} after the nightly export`) =>
  JSON.stringify({
    key: `learned-note-${i}`,
    type: 'learned',
    content,
    source: 'user',
    tags: ['learned'],
    ts: 1_700_000_000 + i,
    bead: `bd-${i % 89}`,
  });

/** A project whose knowledge log has `n` lines (~200 bytes each). */
function bigLog(n: number, extra: string[] = []): { root: string; log: string } {
  const root = tempProject();
  const log = join(root, '.cairn', 'memory', 'knowledge.jsonl');
  spawnSync('mkdir', ['-p', join(root, '.cairn', 'memory')]);
  const lines = Array.from({ length: n }, (_, i) => line(i));
  writeFileSync(log, [...lines, ...extra].join('\n') + '\n');
  return { root, log };
}

function cairnInSmallHeap(root: string, args: string[]) {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, binPath('cairn'), ...args], {
    cwd: root,
    env: cleanEnv(),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('a knowledge log many times the heap', () => {
  it('cairn rotate moves 57,500 of 60,000 lines (13 MB) in a 16 MB heap, none lost or doubled', () => {
    const { root, log } = bigLog(60_000);
    const before = lines(log);
    const r = cairnInSmallHeap(root, ['rotate', '--json', '--strict']);
    expect(r.code, `${r.signal} ${r.stderr.slice(0, 300)}`).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ moved: 57_500, kept: 2_500, recovered: 0 });
    const archive = join(root, '.cairn', 'memory', 'knowledge.archive.jsonl');
    expect([...lines(archive), ...lines(log)]).toEqual(before);
    expect(lines(log)).toHaveLength(2_500);
  });

  it('cairn sanitize builds the active cache of 20,000 lines in a 16 MB heap: duplicates, superseded and residue out as ever', () => {
    const planted = [
      line(20_001, 'note 5: the ledger totals are computed in cents for tenant 5 after the nightly export'), // the content of line 5, newer
      JSON.stringify({
        key: 'learned-note-7',
        type: 'learned',
        content: line(7).match(/"content":"([^"]*)"/)![1],
        source: 'user',
        tags: [],
        ts: 1_800_000_000,
        bead: 'bd-7',
        status: 'superseded',
      }),
      JSON.stringify({
        key: 'learned-cmd',
        type: 'learned',
        content: 'git push origin main && npm publish',
        source: 'hook',
        tags: [],
        ts: 1_800_000_001,
        bead: 'bd-1',
      }),
      'not json',
    ];
    const { root } = bigLog(20_000, planted);
    const r = cairnInSmallHeap(root, ['sanitize', '--json', '--strict']);
    expect(r.code, `${r.signal} ${r.stderr.slice(0, 300)}`).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      read: 20_003,
      active: 19_999,
      unreadable: 1,
      superseded: 1,
      noise: 1,
      trimmed: 0,
      duplicate_key: 0,
      duplicate_content: 1,
      stale: 0,
      needs_review: 0,
    });
    const active = lines(join(root, '.cairn', 'memory', 'knowledge.active.jsonl')).map((l) => JSON.parse(l).key as string);
    expect(active).toHaveLength(19_999);
    expect(active).not.toContain('learned-note-5'); // the older of the two with its content
    expect(active).toContain('learned-note-20001');
    expect(active).not.toContain('learned-note-7');
    const audit = lines(join(root, '.cairn', 'memory', 'knowledge.audit.jsonl')).map((l) => JSON.parse(l));
    expect(audit).toContainEqual(
      expect.objectContaining({
        action: 'duplicate_content',
        key: 'learned-note-5',
        reason: 'same content as learned-note-20001',
      }),
    );
  });

  it('cairn curate --dry-run proposes over 20,000 lines in a 16 MB heap', () => {
    const planted = [
      line(20_001, 'note 5: the ledger totals are computed in cents for tenant 5 after the nightly export'),
      JSON.stringify({
        key: 'learned-gone',
        type: 'learned',
        content: 'parsing lives in src/parser/gone.ts now',
        source: 'user',
        tags: [],
        ts: 1_800_000_000,
        bead: 'bd-1',
      }),
    ];
    const { root } = bigLog(20_000, planted);
    const r = cairnInSmallHeap(root, ['curate', '--dry-run', '--json', '--strict']);
    expect(r.code, `${r.signal} ${r.stderr.slice(0, 300)}`).toBe(0);
    const proposal = JSON.parse(r.stdout) as { lines: string[]; path: string };
    expect(proposal.lines.map((l) => [JSON.parse(l).key, JSON.parse(l).status])).toEqual([
      ['learned-note-20001', 'canonical'],
      ['learned-note-5', 'superseded'],
      ['learned-gone', 'needs_review'],
    ]);
    expect(existsSync(proposal.path)).toBe(true);
  });
});
