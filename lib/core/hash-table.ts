// Typed-array tables for whole-log passes, far smaller than Maps (docs/decisions.md).

/** Not cryptographic (~1 in 10^4 collision odds at 10^6 texts). */
export function hash52(text: string): number {
  let a = 0x9e3779b9 ^ text.length;
  let b = 0x85ebca6b ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  a = Math.imul(a ^ (a >>> 16), 0x7feb352d) ^ Math.imul(b ^ (b >>> 13), 0x846ca68b);
  b = Math.imul(b ^ (b >>> 15), 0x2c1b3c6d) ^ Math.imul(a ^ (a >>> 16), 0x297a2d39);
  a ^= a >>> 15;
  b ^= b >>> 16;
  return (b >>> 12) * 2 ** 32 + (a >>> 0);
}

const EMPTY = -1; // no key is negative

export class HashTable {
  private keys: Float64Array;
  private values: Int32Array | undefined;
  private count = 0;

  constructor(capacity = 1024, withValues = true) {
    const size = 2 ** Math.ceil(Math.log2(Math.max(16, capacity * 2)));
    this.keys = new Float64Array(size).fill(EMPTY);
    this.values = withValues ? new Int32Array(size) : undefined;
  }

  get size(): number {
    return this.count;
  }

  private slot(key: number): number {
    const mask = this.keys.length - 1;
    for (let i = (key % (mask + 1)) >>> 0; ; i = (i + 1) & mask) {
      if (this.keys[i] === key || this.keys[i] === EMPTY) return i;
    }
  }

  get(key: number): number | undefined {
    const i = this.slot(key);
    return this.keys[i] === key ? (this.values?.[i] ?? 0) : undefined;
  }

  has(key: number): boolean {
    return this.keys[this.slot(key)] === key;
  }

  set(key: number, value: number): void {
    let i = this.slot(key);
    if (this.keys[i] !== key) {
      if ((this.count + 1) * 2 > this.keys.length) {
        this.grow();
        i = this.slot(key);
      }
      this.keys[i] = key;
      this.count++;
    }
    if (this.values) this.values[i] = value;
  }

  add(key: number, value = 0): boolean {
    if (this.has(key)) return false;
    this.set(key, value);
    return true;
  }

  private grow(): void {
    const [keys, values] = [this.keys, this.values];
    this.keys = new Float64Array(keys.length * 2).fill(EMPTY);
    this.values = values && new Int32Array(keys.length * 2);
    this.count = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== EMPTY) this.set(keys[i], values?.[i] ?? 0);
  }
}

export class NumberList {
  private data = new Float64Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  at(i: number): number {
    return this.data[i];
  }
}
