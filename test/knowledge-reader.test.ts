import { describe, it, expect } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEntryLine, readEntries, seconds } from '../lib/knowledge/reader.js';
import { FIXTURES, tempProject } from './helpers.js';

// The tolerant reader (SPEC §4.1) over the real Lavra log: 217 lines, 63 of them an object stored
// as a JSON string, 41 with multi-line content.

const LOG = join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl');
const lines = readFileSync(LOG, 'utf8').split('\n').filter(Boolean);

describe('the real Lavra log', () => {
  it('reads every one of the 217 lines, the 63 JSON strings included', () => {
    expect(lines).toHaveLength(217);
    const stringLines = lines.filter((l) => l.startsWith('"'));
    expect(stringLines).toHaveLength(63);
    const warnings: string[] = [];
    const entries = [...readEntries(LOG, (m) => warnings.push(m))];
    expect(warnings).toEqual([]);
    expect(entries).toHaveLength(217);
    // each entry is exactly what the line says, decoded once or twice
    entries.forEach(({ entry }, i) => {
      let raw = JSON.parse(lines[i]);
      if (typeof raw === 'string') raw = JSON.parse(raw);
      expect(entry).toEqual({
        key: raw.key,
        type: raw.type,
        content: raw.content,
        source: raw.source,
        tags: raw.tags,
        ts: raw.ts,
        bead: raw.bead,
      });
    });
    expect(entries.filter(({ entry }) => entry.content.includes('\n'))).toHaveLength(41);
  });

  it('keeps é, — and → as written', () => {
    const contents = [...readEntries(LOG, () => undefined)].map((e) => e.entry.content).join('\n');
    expect(contents).toContain('phase restructure 5→3 core phases');
    expect(contents).toMatch(/input bead AND its parent — when planning/);
    expect(contents).not.toContain('\uFFFD');
  });
});

describe('parseEntryLine', () => {
  it('accepts any JSON spacing and a double-encoded object', () => {
    const obj = { key: 'fact-x', type: 'fact', content: 'x', source: 'user', tags: ['fact'], ts: 1, bead: 'b-1' };
    const expected = { ok: true, value: obj };
    expect(parseEntryLine(JSON.stringify(obj))).toEqual(expected);
    expect(parseEntryLine(JSON.stringify(obj, null, 1).replace(/\n/g, ' '))).toEqual(expected);
    expect(parseEntryLine(JSON.stringify(JSON.stringify(obj)))).toEqual(expected);
    expect(parseEntryLine(`  ${JSON.stringify(obj)}\r`)).toEqual(expected);
  });

  it('fills a missing key from type and content, keeps curation fields, drops malformed ones', () => {
    const r = parseEntryLine(
      JSON.stringify({
        type: 'Learned',
        content: 'Retry with jitter',
        ts: '2026-02-20T00:48:55Z',
        status: 'canonical',
        supersedes: ['a', 3],
        review_reason: 'dupes',
        tags: 'oops',
      }),
    );
    expect(r).toEqual({
      ok: true,
      value: {
        key: 'learned-retry-with-jitter',
        type: 'learned',
        content: 'Retry with jitter',
        source: '',
        tags: [],
        ts: 1771548535,
        bead: '',
        status: 'canonical',
        supersedes: ['a'],
        review_reason: 'dupes',
      },
    });
    const bogus = parseEntryLine(JSON.stringify({ type: 'fact', content: 'x', status: 'bogus' }));
    expect(bogus).toEqual({
      ok: true,
      value: { key: 'fact-x', type: 'fact', content: 'x', source: '', tags: [], ts: 0, bead: '' },
    });
  });

  it.each([
    ['{"key":"x","type":"fact","content":"cut off', /invalid JSON/],
    ['"{\\"key\\": broken"', /invalid JSON/],
    ['[1,2]', /not a JSON object/],
    ['{"type":"fact","content":"   "}', /no content/],
    ['{"content":"no type"}', /no type/],
  ])('%s is reported, not read', (line, reason) => {
    const r = parseEntryLine(line);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });
});

describe('readEntries', () => {
  it('skips and reports unreadable lines with their byte offset, and leaves a torn last line for later', () => {
    const dir = tempProject();
    const path = join(dir, 'k.jsonl');
    const good = JSON.stringify({ type: 'fact', content: 'a' });
    writeFileSync(path, `${good}\nnot json\n${good.replace('"a"', '"b"')}\n{"type":"fact","con`);
    const warnings: string[] = [];
    const got = [...readEntries(path, (m) => warnings.push(m))];
    expect(got.map((e) => e.entry.content)).toEqual(['a', 'b']);
    expect(got[1].offset).toBe(good.length + 1 + 'not json\n'.length);
    expect(warnings).toEqual([`k.jsonl: skipped the line at byte ${good.length + 1}: invalid JSON (line 1, column 2)`]);
  });

  it('reads nothing from a missing file', () => {
    expect([...readEntries(join(tempProject(), 'none.jsonl'), () => undefined)]).toEqual([]);
  });
});

describe('seconds', () => {
  it('reads seconds, milliseconds, numeric strings and ISO dates', () => {
    expect(seconds(1706918400)).toBe(1706918400);
    expect(seconds(1706918400123)).toBe(1706918400);
    expect(seconds('1706918400')).toBe(1706918400);
    expect(seconds('2024-02-03T00:00:00Z')).toBe(1706918400);
    expect(seconds('soon')).toBe(0);
    expect(seconds(-5)).toBe(0);
  });
});
