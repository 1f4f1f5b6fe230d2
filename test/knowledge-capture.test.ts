import { describe, it, expect } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendEntries, captureComments, cleanContent, importLavraLog } from '../lib/knowledge/capture.js';
import { makeEntry } from '../lib/knowledge/entry.js';
import { FIXTURES, openTestStore, tempProject } from './helpers.js';
import { Deadline } from '../lib/core/deadline.js';
import { Store } from '../lib/store/store.js';
import { locate } from '../lib/store/root.js';
import { createLogger } from '../lib/core/logger.js';
import { knowledgeDb } from '../lib/knowledge/index.js';

// Capture in-process (SPEC §4.1, §4.2): the key family across log and archive, projects kept apart,
// the content cap, and the Lavra import.

const P = 'cap';
const entry = (content: string, project = P) => makeEntry({ type: 'fact', content, bead: 'b', source: 'test', ts: 1, project });
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('appendEntries', () => {
  it('finds a key family in the archive too, and ignores another project’s entries', () => {
    const store = openTestStore(tempProject(), P);
    mkdirSync(join(store.dir, 'memory'), { recursive: true });
    const archived = entry('Ports below 1024 need root');
    writeFileSync(
      store.archivePath,
      JSON.stringify(archived) +
        '\n' +
        JSON.stringify({ ...entry('Ports below 1024 need root, says B', 'other'), key: `${archived.key}-2` }) +
        '\n',
    );
    // the same words, and other words under the same key (a slug collision)
    const other = { ...entry('Ports below 1024 need root (on Linux)'), key: archived.key };
    const r = appendEntries(store, [entry('ports below 1024 need ROOT.'), other]);
    expect(r.map((a) => [a.entry.key, a.status])).toEqual([
      [archived.key, 'duplicate'],
      [`${archived.key}-2`, 'added'], // project other's -2 is not ours: the suffix is free here
    ]);
  });

  it('many keys at once (a backfill) read each line once and still dedupe within the batch', () => {
    const store = openTestStore(tempProject(), P);
    const batch = Array.from({ length: 40 }, (_, i) => entry(`note number ${i % 20}`));
    const r = appendEntries(store, batch);
    expect(r.filter((a) => a.status === 'added')).toHaveLength(20);
    expect(r.filter((a) => a.status === 'duplicate')).toHaveLength(20);
    expect(appendEntries(store, batch.slice(0, 20)).every((a) => a.status === 'duplicate')).toBe(true);
    expect(lines(store.knowledgePath)).toHaveLength(20);
  });

  it('a deadline that passes while a large batch is compared under the lock stops it there: nothing written, the lock released', () => {
    /** A deadline that passes at its `looks`-th look. */
    class PassingAt extends Deadline {
      looks = 0;
      constructor(private readonly at_: number) {
        super(60_000);
      }
      passed(): boolean {
        return ++this.looks >= this.at_;
      }
    }
    const batch = Array.from({ length: 2_000 }, (_, i) => entry(`batch note number ${i}`));
    // the batch meets: no log yet; a log read as a file (no index); a log and its index
    for (const stored of ['none', 'file', 'index'] as const) {
      const root = tempProject();
      if (stored !== 'none') {
        const before = openTestStore(root, P);
        appendEntries(
          before,
          Array.from({ length: 300 }, (_, i) => entry(`stored note number ${i}`)),
        );
        if (stored === 'index') knowledgeDb(before, ['log', 'archive']);
        before.close();
      }
      const log = join(root, '.cairn', 'memory', 'knowledge.jsonl');
      const logBefore = existsSync(log) ? readFileSync(log, 'utf8') : '';
      const deadline = new PassingAt(3); // the look before the lock, then the comparisons' first two
      const store = new Store(locate({ root, project: P }), deadline, createLogger('test', true), true);
      const during = stored === 'none' ? 'recording the change' : 'reading the stored entries';
      expect(() => appendEntries(store, batch), stored).toThrow(`deadline of 60000 ms passed during ${during}`);
      expect(deadline.looks, stored).toBe(3); // within the comparisons, not after 2,000 of them (nor again in the files)
      expect(readFileSync(log, 'utf8'), stored).toBe(logBefore); // nothing written
      expect(existsSync(`${log}.lock`), stored).toBe(false);
      store.close();
    }
  });
});

describe('cleanContent', () => {
  it('caps at 4096 bytes on a character boundary', () => {
    const text = 'é'.repeat(3000); // 6000 bytes
    const capped = cleanContent(text);
    expect(Buffer.byteLength(capped)).toBe(4096);
    expect(capped).toBe('é'.repeat(2048));
  });
});

describe('importLavraLog', () => {
  it('keeps keys, times and beads of the real log, recomputes tags as whole words, keeps é — →', () => {
    const store = openTestStore(tempProject(), P);
    const report = importLavraLog(store, join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl'));
    expect(report).toEqual({ read: 217, appended: 217, duplicates: 0, unreadable: 0 });
    const log = lines(store.knowledgePath);
    expect(log.every((e) => e.project === P && e.tags[0] === e.type)).toBe(true);
    // Lavra tagged 33 entries `ui` (from "build", "guide"…); whole words find none
    expect(log.filter((e) => e.tags.includes('ui'))).toHaveLength(0);
    const text = log.map((e) => e.content).join('\n');
    for (const ch of ['—', '→']) expect(text).toContain(ch);
    const source = readFileSync(join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => {
        const v = JSON.parse(l);
        return typeof v === 'string' ? JSON.parse(v) : v;
      });
    expect(log.map((e) => [e.key, e.ts, e.type])).toEqual(source.map((e) => [e.key, e.ts, e.type]));
    expect(importLavraLog(store, join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl'))).toMatchObject({
      appended: 0,
      duplicates: 217,
    });
  });

  it('a capture later finds the imported key family', () => {
    const store = openTestStore(tempProject(), P);
    importLavraLog(store, join(FIXTURES, 'knowledge', 'knowledge.main-f048edf.jsonl'));
    const r = captureComments(store, [
      {
        bead: 'b',
        text: "LEARNED: bd show --json returns an array, not a single object. Must use jq '.[0].field' to extract fields.",
        ts: 2,
        source: 'test',
      },
    ]);
    expect(r.appended.map((a) => a.status)).toEqual(['duplicate']);
  });
});
