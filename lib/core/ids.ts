import { randomBytes } from './crypto.js';
import { shortHash, normaliseText } from './text.js';

// ULIDs: 48-bit millisecond time + 80 random bits in Crockford base32, so ids sort by time.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

function ulidTime(id: string): number {
  let t = 0;
  for (const ch of id.slice(0, TIME_CHARS)) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) return NaN;
    t = t * 32 + v;
  }
  return t;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function randomPart(): string {
  const bytes = randomBytes(RANDOM_CHARS);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

function increment(s: string): string | undefined {
  const chars = s.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    const v = ALPHABET.indexOf(chars[i]);
    if (v < 31) {
      chars[i] = ALPHABET[v + 1];
      return chars.join('');
    }
    chars[i] = ALPHABET[0];
  }
  return undefined;
}

/** Greater than `after`: appends stay in (ts, id) order through races and clock steps. */
export function nextUlid(now: number, after?: string): string {
  const afterTime = after && after.length === TIME_CHARS + RANDOM_CHARS ? ulidTime(after) : NaN;
  if (Number.isFinite(afterTime) && afterTime >= now) {
    const next = increment(after!.slice(TIME_CHARS));
    if (next) return after!.slice(0, TIME_CHARS) + next;
    return encodeTime(afterTime + 1) + randomPart();
  }
  return encodeTime(now) + randomPart();
}

/** Deterministic: merged logs replay to the same rows. */
export function patternId(project: string, role: string, text: string): string {
  return 'p' + shortHash(`${project}\u0000${role}\u0000${normaliseText(text)}`).slice(0, 15);
}

const HEX = '0123456789abcdef';

/** Summed in SQL for the candidate digest; a non-hex character counts −1. */
export function idBits(id: string): number {
  let n = 0;
  for (let i = 1; i <= 10; i++) n = n * 16 + HEX.indexOf(id.charAt(i));
  return n;
}
