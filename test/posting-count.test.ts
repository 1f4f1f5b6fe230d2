import { describe, it, expect } from 'vitest';
import { seededRandom } from './helpers.js';
import {
  JavaScriptCounter,
  WebAssemblyCounter,
  postingCounter,
  type PostingCounter,
  type Postings,
} from '../lib/patterns/index/posting-count.js';

// The count at the heart of a near-duplicate lookup runs as WebAssembly, or in JavaScript where
// WebAssembly's memory cannot be had (lib/patterns/index/posting-count.ts): each must find, list by list,
// exactly what counting each posting's pattern plainly finds, and a command's lookups must not see
// each other's counts.

/** Counting as the kernel is specified: each posting adds one to its seq; a seq is found when its count equals what its size needs. */
function plainCount(lists: Postings[], needed: Uint8Array): number[][] {
  const counts = new Map<number, number>();
  return lists.map(({ seqs, sizes }) =>
    Array.from(seqs).flatMap((seq, i) => {
      const count = (counts.get(seq) ?? 0) + 1;
      counts.set(seq, count);
      return count === needed[sizes[i]] ? [seq] : [];
    }),
  );
}

/** A lookup's window: `lists` posting lists over patterns with seqs below `top`, each pattern of one size, in seq order. */
function lookup(rnd: () => number, lists: number, top: number): { lists: Postings[]; needed: Uint8Array } {
  const patterns = Array.from({ length: 1 + Math.floor(rnd() * 400) }, () => Math.floor(rnd() * top));
  const size = new Map(patterns.map((seq) => [seq, 2 + Math.floor(rnd() * 30)]));
  const distinct = [...size.keys()].sort((a, b) => a - b);
  const needed = new Uint8Array(65_536);
  for (let m = 2; m < 32; m++) if (rnd() < 0.7) needed[m] = 1 + Math.floor(rnd() * lists);
  return {
    needed,
    lists: Array.from({ length: lists }, () => {
      const held = distinct.filter(() => rnd() < 0.6);
      return { seqs: Int32Array.from(held), sizes: Uint16Array.from(held, (seq) => size.get(seq)!) };
    }),
  };
}

describe.each([
  ['WebAssembly', () => new WebAssemblyCounter()],
  ['JavaScript', () => new JavaScriptCounter()],
] as [string, () => PostingCounter][])('counting postings in %s', (_, newCounter) => {
  it('finds, list by list, what a plain count finds, over one command’s lookups of larger and smaller seqs', () => {
    const rnd = seededRandom(17);
    const counter = newCounter(); // one per command: its memory serves every lookup
    // seqs far apart (a large store), then near the start (the first lookup's table and list lie where
    // these counts go), then beyond anything seen (the memory grows)
    const tops = [1_000, 200_000, 50, 3_000, 2_000_000, 10, 500_000, 4_000_000];
    let found = 0;
    for (const [k, top] of tops.entries()) {
      const { lists, needed } = lookup(rnd, 1 + (k % 9), top);
      const expected = plainCount(lists, needed);
      expect(
        counter.reached(lists, needed).map((seqs) => Array.from(seqs)),
        `lookup ${k} (seqs below ${top})`,
      ).toEqual(expected);
      found += expected.flat().length;
    }
    expect(found).toBeGreaterThan(100); // the lookups do find seqs
  });

  it('counts from zero at every seq in the lookup after one of smaller seqs (where that one’s table and list lay)', () => {
    const counter = newCounter();
    const everySize = new Uint8Array(65_536).fill(1);
    const small = { seqs: Int32Array.from({ length: 50 }, (_, i) => i), sizes: new Uint16Array(50).fill(9) };
    counter.reached([small, small], everySize);
    const dense = { seqs: Int32Array.from({ length: 100_000 }, (_, i) => i), sizes: new Uint16Array(100_000).fill(9) };
    expect(counter.reached([dense], everySize)[0]).toEqual(dense.seqs);
  });

  it('counts a seq in every list of a window of 255, the most a lookup reads', () => {
    const lists = Array.from({ length: 255 }, () => ({
      seqs: Int32Array.from([7, 70_000]),
      sizes: Uint16Array.from([40, 41]),
    }));
    const needed = new Uint8Array(65_536);
    needed[40] = 255;
    needed[41] = 1;
    const found = newCounter()
      .reached(lists, needed)
      .map((seqs) => Array.from(seqs));
    expect(found[0]).toEqual([70_000]);
    expect(found[254]).toEqual([7]);
    expect(found.slice(1, 254).flat()).toEqual([]);
  });

  it('finds nothing in empty lists, and the lookup after them counts from zero', () => {
    const counter = newCounter();
    const needed = new Uint8Array(65_536).fill(1);
    expect(counter.reached([{ seqs: new Int32Array(0), sizes: new Uint16Array(0) }], needed).map((s) => s.length)).toEqual([0]);
    const list = { seqs: Int32Array.from([3, 9]), sizes: Uint16Array.from([5, 5]) };
    expect(counter.reached([list], needed).map((s) => Array.from(s))).toEqual([[3, 9]]);
    expect(counter.reached([list], needed).map((s) => Array.from(s))).toEqual([[3, 9]]); // the counts were zeroed after the last lookup
  });
});

describe('postingCounter', () => {
  it('counts in WebAssembly where it can', () => {
    expect(postingCounter()).toBeInstanceOf(WebAssemblyCounter);
  });
});
