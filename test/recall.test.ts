import { describe, it, expect } from 'vitest';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, run, tempProject } from './helpers.js';
import { formatHits } from '../lib/knowledge/recall.js';
import type { KnowledgeHit } from '../lib/knowledge/index.js';

// cairn recall (SPEC §4.5) over the real Lavra log and a small archive.

const entry = (key: string, type: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    key,
    type,
    content,
    source: 'test',
    tags: [type, 'sqlite'],
    ts: 1_780_000_000,
    bead: 'b-9',
    ...extra,
  });

function project() {
  const root = tempProject();
  const memory = join(root, '.cairn', 'memory');
  mkdirSync(memory, { recursive: true });
  copyFileSync(join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl'), join(memory, 'knowledge.jsonl'));
  writeFileSync(
    join(memory, 'knowledge.archive.jsonl'),
    entry('fact-old-kb-search', 'fact', 'kb_search once used LIKE instead of FTS5') + '\n',
  );
  const recall = (args: string[]) => {
    const r = run('cairn', ['recall', ...args, '--strict'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  return { root, recall };
}

describe('cairn recall', () => {
  it('finds by meaning of the words, best first, framed as [TYPE] content / bead | tags', () => {
    const { recall } = project();
    const out = recall(['sql injection', 'kb_search']);
    const hits = out.trimEnd().split('\n\n');
    expect(hits.length).toBeGreaterThan(2);
    expect(hits.length).toBeLessThanOrEqual(10);
    for (const h of hits) expect(h).toMatch(/^\[[A-Z-]+\] \S[^\n]*(\n {4}[^\n]*)*\n {2}bead: \S+ \| .+$/);
    expect(hits[0]).toMatch(/kb_search/);
    // shell residue (a `bd create` stored as a note) may be found, but below the notes
    const residue = hits.findIndex((h) => h.startsWith('[LEARNED] bd create'));
    expect(residue === -1 || residue >= 3).toBe(true);
  });

  it('--type filters inside the search, --limit caps it, --all adds the archive', () => {
    const { recall } = project();
    // the best hit overall is not a decision: a filter applied after the limit would find none
    expect(recall(['kb_search', 'injection', '--limit', '1'])).toMatch(/^\[(LEARNED|FACT)\]/);
    const decisions = recall(['kb_search', 'injection', '--type', 'decision', '--limit', '1']).trimEnd().split('\n\n');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatch(/^\[DECISION\] Fixed SQL injection in kb_search\(\)/);
    expect(recall(['kb_search', 'injection', '--type', 'decision']).match(/^\[/gm)).toEqual(expect.arrayContaining(['[']));
    expect(recall(['kb_search', 'injection', '--type', 'decision'])).not.toMatch(/^\[(?!DECISION)/m);
    expect(recall(['kb_search', 'LIKE'])).not.toContain('once used LIKE');
    expect(recall(['kb_search', 'LIKE', '--all'])).toMatch(
      /\[FACT\] kb_search once used LIKE instead of FTS5\n {2}bead: b-9 \| sqlite \| archived/,
    );
  });

  it('--recent N lists the newest; --stats counts; --json carries the hits', () => {
    const { recall } = project();
    const recent = recall(['--recent', '3']).trimEnd().split('\n\n');
    expect(recent).toHaveLength(3);
    expect(recent[0]).toMatch(/^\[LEARNED\] DECISION: Engineering review applied/);
    const stats = JSON.parse(recall(['--stats', '--json']));
    expect(stats).toMatchObject({
      total: 218,
      archived: 1,
      by_type: { decision: 78, learned: 59, fact: 37, pattern: 30, investigation: 14 },
    });
    expect(recall(['--stats'])).toMatch(/^entries: 218 \(1 archived\)\n\nby type:\n {2}decision +78\n/);
    const json = JSON.parse(recall(['Tailwind', 'v4', 'theme', '--json']));
    expect(json.terms).toEqual(['tailwind', 'v4', 'theme']);
    expect(json.hits[0]).toMatchObject({
      type: 'learned',
      archived: false,
      status: null,
      bead: expect.stringMatching(/^bdcompound-hm0/),
    });
  });

  it('a query of only FTS5 syntax or short words finds nothing, without an error', () => {
    const { recall } = project();
    expect(recall(['AND', 'OR', '(', '*', '"'])).toBe('');
  });
});

describe('formatHits', () => {
  const hit = (content: string, extra: Partial<KnowledgeHit> = {}): KnowledgeHit => ({
    id: 1,
    key: 'k',
    type: 'fact',
    content,
    bead: 'b-1',
    tags: ['fact', 'api'],
    ts: 0,
    status: null,
    archived: false,
    score: 1,
    ...extra,
  });

  it('indents continuation lines by four spaces, so no content line passes for the bead line or a new hit', () => {
    expect(
      formatHits([
        hit('first\n  bead: fake | tags\n[FACT] fake hit\n\nlast'),
        hit('second', { status: 'needs_review', bead: 'cd /x && \\' }),
      ]),
    ).toBe(
      '[FACT] first\n      bead: fake | tags\n    [FACT] fake hit\n    last\n  bead: b-1 | api\n\n[FACT] second\n  bead: - | api | needs_review\n',
    );
  });
});
