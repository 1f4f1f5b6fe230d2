import { describe, it, expect } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { activeCacheFresh, anchorChecker, sanitizeKnowledge } from '../lib/knowledge/sanitize.js';
import { knowledgeLine, openTestStore, processesIn, run, tempProject } from './helpers.js';

// cairn sanitize (SPEC §4.5): the active cache and its audit, built from the shared log, which is
// left exactly as it was.

const P = 'san';
let ts = 1_780_000_000;
const entry = (key: string, content: string, extra: Record<string, unknown> = {}) => knowledgeLine(P, key, content, ts++, extra);

function project(lines: string[]) {
  const root = tempProject();
  mkdirSync(join(root, 'plugins', 'lavra', 'skills'), { recursive: true });
  writeFileSync(join(root, 'plugins', 'lavra', 'skills', 'SKILL.md'), 'skill\n');
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'capture.ts'), 'export function readFileSafe() {}\n');
  const log = join(root, '.cairn', 'memory', 'knowledge.jsonl');
  mkdirSync(join(root, '.cairn', 'memory'), { recursive: true });
  writeFileSync(log, lines.map((l) => l + '\n').join(''));
  return { root, log, store: openTestStore(root, P) };
}

const readJsonl = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('sanitizeKnowledge', () => {
  it('builds the active cache and an audit of every decision, leaving the log untouched', () => {
    const lines = [
      entry('fact-kept', 'The installer copies plugins/lavra/skills/SKILL.md (case as written)'),
      'not json at all',
      entry('learned-bd-create-x', 'bd create --title="Fix it" --description="$(cat <<\'DESC\'\n## What\nstuff\nDESC\n)"'),
      entry('learned-tail', 'OpenCode shows console.log messages." && bd close bdcompound-rm9'),
      entry('fact-dup-key', 'first wording of the dup'),
      entry('fact-dup-key', 'second wording of the dup, newer'),
      entry('decision-a', 'Use WAL mode for the index.'),
      entry('pattern-b', 'use   WAL mode for the **index**'),
      entry('fact-stale', 'Config lives in .lavra/config/compress.json now'),
      entry('fact-partial', 'Both src/capture.ts and src/gone.ts parse payloads'),
      entry('fact-symbol', 'Call `readFileSafe()` and `writeFileSafe()` for every file'),
      entry('fact-old', 'retired note'),
      entry('fact-old', 'retired note', { status: 'superseded', superseded_by: 'fact-kept', review_reason: 'r' }),
    ];
    const { log, store } = project(lines);
    const before = readFileSync(log, 'utf8');
    const report = sanitizeKnowledge(store, Date.parse('2026-05-01T00:00:00Z'));
    expect(report).toEqual({
      read: 12,
      active: 6,
      unreadable: 1,
      superseded: 1,
      noise: 1,
      trimmed: 1,
      duplicateKey: 1,
      duplicateContent: 1,
      stale: 1,
      needsReview: 2,
    });
    expect(readFileSync(log, 'utf8')).toBe(before);

    const active = readJsonl(store.activePath);
    expect(active.map((e) => [e.key, e.status ?? null])).toEqual([
      ['fact-kept', null],
      ['learned-tail', null],
      ['fact-dup-key', null],
      ['pattern-b', null],
      ['fact-partial', 'needs_review'],
      ['fact-symbol', 'needs_review'],
    ]);
    expect(active.find((e) => e.key === 'fact-kept').content).toBe('The installer copies plugins/lavra/skills/SKILL.md (case as written)');
    expect(active.find((e) => e.key === 'learned-tail').content).toBe('OpenCode shows console.log messages.');
    expect(active.find((e) => e.key === 'fact-dup-key').content).toBe('second wording of the dup, newer');

    const audit = readJsonl(store.auditPath);
    const actions = audit.map((r) => [r.action, r.key ?? null]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['skip_unreadable', null],
        ['filter_noise', 'learned-bd-create-x'],
        ['trim_residue', 'learned-tail'],
        ['duplicate_key', 'fact-dup-key'],
        ['duplicate_content', 'decision-a'],
        ['drop_stale', 'fact-stale'],
        ['flag_needs_review', 'fact-partial'],
        ['flag_needs_review', 'fact-symbol'],
        ['drop_superseded', 'fact-old'],
      ]),
    );
    expect(audit.every((r) => typeof r.ts === 'number' && typeof r.action === 'string')).toBe(true);
    expect(audit.at(-1)).toEqual({ ts: 1777593600, action: 'summary', summary: report });
    expect(audit.find((r) => r.key === 'fact-partial').anchors).toEqual({
      files: ['src/capture.ts', 'src/gone.ts'],
      symbols: [],
      missingFiles: ['src/gone.ts'],
      missingSymbols: [],
    });
    expect(audit.find((r) => r.key === 'fact-symbol').anchors.missingSymbols).toEqual(['writeFileSafe']);
    expect(audit.find((r) => r.action === 'skip_unreadable')).toMatchObject({
      line: 2,
      reason: expect.stringMatching(/invalid JSON/),
    });
  });

  it('gives the cache the log’s time, so auto-recall takes it as fresh until the next capture', () => {
    const { log, store } = project([entry('fact-a', 'alpha')]);
    sanitizeKnowledge(store, Date.now());
    expect(statSync(store.activePath).mtimeMs).toBeCloseTo(statSync(log).mtimeMs, 0);
    expect(activeCacheFresh(store)).toBe(true);
    writeFileSync(log, readFileSync(log, 'utf8') + entry('fact-b', 'beta') + '\n');
    const later = statSync(log).mtimeMs / 1000 + 1; // a capture comes at least a millisecond after the build; here it may not
    utimesSync(log, later, later);
    expect(activeCacheFresh(store)).toBe(false);
  });
});

describe('anchorChecker', () => {
  it('takes relative paths with a directory, not URLs, home or absolute paths, and keeps their case', () => {
    const root = tempProject();
    mkdirSync(join(root, 'Docs'));
    writeFileSync(join(root, 'Docs', 'README.md'), 'x');
    const check = anchorChecker(root);
    expect(check('See Docs/README.md, https://example.com/a/b.html, ~/.config/x.json, /etc/hosts.conf and ../outside/file.ts')).toEqual({
      files: ['Docs/README.md', '../outside/file.ts'],
      symbols: [],
      missingFiles: ['../outside/file.ts'],
      missingSymbols: [],
    });
  });
});

describe('cairn sanitize', () => {
  it('prints the summary with --json', () => {
    const { root } = project([entry('fact-a', 'alpha'), entry('fact-b', 'alpha')]);
    const r = run('cairn', ['sanitize', '--json', '--strict', '--project', P], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ read: 2, active: 1, duplicate_content: 1 });
  });

  it('after a burst of captures the background run catches up: the last capture is in the cache too', async () => {
    const root = tempProject();
    writeFileSync(join(root, '.cairn', 'config.json'), JSON.stringify({ knowledge: { sanitizeEveryMs: 400 } }));
    for (const note of ['retries need jitter', 'timeouts need a budget', 'locks need a deadline']) {
      expect(run('memory-capture', ['--bead', 'b-1', '--text', `LEARNED: ${note}`, '--quiet'], { cwd: root }).code).toBe(0);
    }
    // the first capture started the only run; the two after it, within its interval, started none
    const active = join(root, '.cairn', 'memory', 'knowledge.active.jsonl');
    const cached = () => {
      try {
        return readFileSync(active, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).content as string);
      } catch {
        return [];
      }
    };
    for (let waited = 0; cached().length < 3 && waited < 15_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    expect(cached().sort()).toEqual(['locks need a deadline', 'retries need jitter', 'timeouts need a budget']);
  });

  it('a project removed while the background run waits out its interval is not made again', async () => {
    const root = tempProject();
    writeFileSync(join(root, '.cairn', 'config.json'), JSON.stringify({ knowledge: { sanitizeEveryMs: 400 } }));
    expect(
      run('memory-capture', ['--bead', 'b-1', '--text', 'LEARNED: worktrees are removed after landing', '--quiet'], {
        cwd: root,
      }).code,
    ).toBe(0);
    const active = join(root, '.cairn', 'memory', 'knowledge.active.jsonl');
    for (let waited = 0; !existsSync(active) && waited < 15_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    rmSync(root, { recursive: true, force: true, maxRetries: 10 }); // as `git worktree remove` does, the run still working or waiting
    for (let waited = 0; processesIn(root).length > 0 && waited < 15_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    expect(processesIn(root)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  });
});
