// The hot loop of terms.ts nearDuplicates: count each posting's seq, note those a list brought to what their size
// needs. V8 would run it unoptimised for a command's life, so WebAssembly (./README.md). BODY encodes this source:
//   (func (export "count") (param $seqs i32) (param $sizes i32) (param $n i32) (param $counts i32)
//                          (param $needed i32) (param $found i32) (result i32)
//     (local $i i32) (local $reached i32) (local $seq i32) (local $c i32)
//     (block (loop
//       (br_if 1 (i32.ge_u (local.get $i) (local.get $n)))
//       (local.set $seq (i32.load (i32.add (local.get $seqs) (i32.shl (local.get $i) (i32.const 2)))))
//       (local.set $c (i32.add (i32.load8_u (i32.add (local.get $counts) (local.get $seq))) (i32.const 1)))
//       (i32.store8 (i32.add (local.get $counts) (local.get $seq)) (local.get $c))
//       (if (i32.eq (local.get $c)
//                   (i32.load8_u (i32.add (local.get $needed)
//                     (i32.load16_u (i32.add (local.get $sizes) (i32.shl (local.get $i) (i32.const 1)))))))
//         (then (i32.store (i32.add (local.get $found) (i32.shl (local.get $reached) (i32.const 2))) (local.get $seq))
//               (local.set $reached (i32.add (local.get $reached) (i32.const 1)))))
//       (local.set $i (i32.add (local.get $i) (i32.const 1)))
//       (br 0)))
//     (local.get $reached))
//   (memory (export "memory") 1)
// A count is a byte: a list adds at most one to each seq, and a window holds at most 255 lists (COUNTED_STEMS).

// biome-ignore format: the bytes grouped an instruction (or a section) a line
const BODY = [
  0x01, 0x04, 0x7f, // four i32 locals
  0x02, 0x40, 0x03, 0x40,
  0x20, 6, 0x20, 2, 0x4f, 0x0d, 1,
  0x20, 0, 0x20, 6, 0x41, 2, 0x74, 0x6a, 0x28, 2, 0, 0x21, 8,
  0x20, 3, 0x20, 8, 0x6a, 0x2d, 0, 0, 0x41, 1, 0x6a, 0x21, 9,
  0x20, 3, 0x20, 8, 0x6a, 0x20, 9, 0x3a, 0, 0,
  0x20, 9, 0x20, 4, 0x20, 1, 0x20, 6, 0x41, 1, 0x74, 0x6a, 0x2f, 1, 0, 0x6a, 0x2d, 0, 0, 0x46,
  0x04, 0x40, 0x20, 5, 0x20, 7, 0x41, 2, 0x74, 0x6a, 0x20, 8, 0x36, 2, 0, 0x20, 7, 0x41, 1, 0x6a, 0x21, 7, 0x0b,
  0x20, 6, 0x41, 1, 0x6a, 0x21, 6, 0x0c, 0,
  0x0b, 0x0b, 0x20, 7, 0x0b,
];
const section = (id: number, bytes: number[]) => [id, bytes.length, ...bytes]; // every section here is under 128 bytes
const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
// biome-ignore format: the bytes grouped an instruction (or a section) a line
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 6, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f]), // (i32 × 6) → i32
  ...section(3, [1, 0]),
  ...section(5, [1, 0, 1]), // one memory of at least one page
  ...section(7, [2, ...name('count'), 0, 0, ...name('memory'), 2, 0]),
  ...section(10, [1, BODY.length, ...BODY]),
]);

const PAGE = 65_536;
const SIZES = 65_536; // terms.ts SIZE_CAP + 1

export interface Postings {
  seqs: Int32Array;
  sizes: Uint16Array;
}

/** Zeroed again after each lookup. */
export interface PostingCounter {
  /** For each list, the seqs whose count it brought to `needed[size]`. */
  reached(lists: Postings[], needed: Uint8Array): Int32Array[];
}

/** JavaScript under `--jitless`, or a `ulimit -v` below the ~10 GB V8 reserves for a WebAssembly memory. */
export function postingCounter(): PostingCounter {
  if (typeof WebAssembly === 'undefined') return new JavaScriptCounter();
  try {
    return new WebAssemblyCounter();
  } catch (err) {
    if (err instanceof RangeError) return new JavaScriptCounter();
    throw err;
  }
}

export class WebAssemblyCounter implements PostingCounter {
  private readonly memory: WebAssembly.Memory;
  private readonly count: (seqs: number, sizes: number, n: number, counts: number, needed: number, found: number) => number;
  /** Bytes holding counts (zero between lookups). */
  private counted = 0;

  constructor() {
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(MODULE));
    this.memory = exports.memory as WebAssembly.Memory;
    this.count = exports.count as WebAssemblyCounter['count'];
  }

  reached(lists: Postings[], needed: Uint8Array): Int32Array[] {
    const { top, longest } = extent(lists);
    // counts first: where a larger seq's counts go, an earlier lookup's table and list lay
    const counted = align(top + 1);
    const at = { needed: Math.max(counted, this.counted), seqs: 0, sizes: 0, found: 0 };
    at.seqs = at.needed + SIZES;
    at.sizes = at.seqs + 4 * longest;
    at.found = align(at.sizes + 2 * longest);
    this.reserve(at.found + 4 * longest);
    const bytes = new Uint8Array(this.memory.buffer);
    if (counted > this.counted) bytes.fill(0, this.counted, counted);
    this.counted = at.needed;
    bytes.set(needed, at.needed);
    const found = lists.map(({ seqs, sizes }) => {
      bytes.set(new Uint8Array(seqs.buffer, seqs.byteOffset, seqs.byteLength), at.seqs);
      bytes.set(new Uint8Array(sizes.buffer, sizes.byteOffset, sizes.byteLength), at.sizes);
      const n = this.count(at.seqs, at.sizes, seqs.length, 0, at.needed, at.found);
      return new Int32Array(this.memory.buffer, at.found, n).slice();
    });
    bytes.fill(0, 0, top + 1); // for the next lookup
    return found;
  }

  private reserve(size: number): void {
    const more = Math.ceil(size / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (more > 0) this.memory.grow(more);
  }
}

export class JavaScriptCounter implements PostingCounter {
  private counts = new Uint8Array(0);

  reached(lists: Postings[], needed: Uint8Array): Int32Array[] {
    const { top, longest } = extent(lists);
    if (this.counts.length <= top) this.counts = new Uint8Array(top + 1);
    const counts = this.counts;
    const found = new Int32Array(longest);
    const reached = lists.map(({ seqs, sizes }) => {
      let n = 0;
      for (let i = 0; i < seqs.length; i++) if (++counts[seqs[i]] === needed[sizes[i]]) found[n++] = seqs[i];
      return found.slice(0, n);
    });
    counts.fill(0, 0, top + 1);
    return reached;
  }
}

function extent(lists: Postings[]): { top: number; longest: number } {
  let top = 0;
  let longest = 0;
  for (const { seqs } of lists) {
    if (seqs.length) top = Math.max(top, seqs[seqs.length - 1]);
    longest = Math.max(longest, seqs.length);
  }
  return { top, longest };
}

const align = (offset: number) => Math.ceil(offset / 8) * 8;
