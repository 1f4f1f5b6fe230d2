import { describe, expect, it } from 'vitest';
import { HashTable, hash52, NumberList } from '../lib/core/hash-table.js';
import { seededRandom } from './helpers.js';

// The numeric tables the whole-log passes of sanitize and curate hold instead of Maps of strings.

describe('hash52', () => {
  it('a whole number below 2^52, the same for the same text, no collision among 200,000 similar keys', () => {
    expect(hash52('learned-oauth-redirect')).toBe(hash52('learned-oauth-redirect'));
    const seen = new Set<number>();
    for (let i = 0; i < 200_000; i++) {
      const h = hash52(`learned-note-${i}\u0000the ledger totals ${i % 97}`);
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 52).toBe(true);
      seen.add(h);
    }
    expect(seen.size).toBe(200_000);
    expect(hash52('é — →')).not.toBe(hash52('e - ->'));
  });
});

describe('HashTable', () => {
  it('behaves as a Map of numbers through growth, and as a set without values', () => {
    const random = seededRandom(5);
    const table = new HashTable(4);
    const set = new HashTable(4, false);
    const expected = new Map<number, number>();
    for (let i = 0; i < 50_000; i++) {
      const key = Math.floor(random() * 30_000) * 1_000_003; // repeats, and keys past 2^32
      expected.set(key, i);
      table.set(key, i);
      set.add(key);
    }
    expect(table.size).toBe(expected.size);
    expect(set.size).toBe(expected.size);
    for (const [key, value] of expected) {
      expect(table.get(key)).toBe(value);
      expect(set.has(key)).toBe(true);
    }
    expect(table.get(7)).toBeUndefined();
    expect(set.add(7)).toBe(true);
    expect(set.add(7)).toBe(false);
  });
});

describe('NumberList', () => {
  it('grows and keeps what was pushed', () => {
    const list = new NumberList();
    for (let i = 0; i < 5000; i++) list.push(i * 3.5);
    expect(list.length).toBe(5000);
    expect(list.at(4999)).toBe(4999 * 3.5);
  });
});
