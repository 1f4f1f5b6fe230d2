import { isatty } from 'node:tty';
import { CairnError } from '../core/errors.js';

export const DEFAULT_STDIN_CAP = 8 * 1024 * 1024;

export interface StdinText {
  text: string;
  truncated: boolean;
  timedOut: boolean;
}

/**
 * Read stdin up to `cap` bytes. A TTY is never read (it would wait for a person); a pipe that
 * stays open without data is abandoned after `waitMs`, so a host that forgets to close stdin
 * cannot hang a hook. Reading stops at the cap so a runaway producer cannot exhaust memory.
 */
export function readStdin(cap = DEFAULT_STDIN_CAP, waitMs = 1000): Promise<StdinText> {
  if (isatty(0)) return Promise.resolve({ text: '', truncated: false, timedOut: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const stdin = process.stdin;
    const finish = (truncated: boolean, timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      stdin.pause();
      if (truncated || timedOut) stdin.destroy();
      try {
        resolve({ text: decodeUtf8Prefix(Buffer.concat(chunks, total), truncated), truncated, timedOut });
      } catch (err) {
        reject(err);
      }
    };
    const timer = setTimeout(() => finish(false, true), waitMs);
    timer.unref();
    stdin.on('data', (chunk: Buffer) => {
      if (total + chunk.length > cap) {
        chunks.push(chunk.subarray(0, cap - total));
        total = cap;
        finish(true, false);
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    });
    stdin.once('end', () => finish(false, false));
    stdin.once('error', () => finish(false, false));
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode UTF-8; when cut at the cap, drop a trailing partial character. Binary data (invalid UTF-8
 * or a NUL byte) is malformed input, not text to store with U+FFFD in it.
 */
export function decodeUtf8Prefix(bytes: Buffer, cut: boolean, what = 'stdin'): string {
  let end = bytes.length;
  if (cut) {
    let back = 0;
    while (back < 3 && end - back - 1 >= 0 && (bytes[end - back - 1] & 0xc0) === 0x80) back++;
    const lead = end - back - 1;
    if (lead >= 0) {
      const b = bytes[lead];
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (need > back + 1) end = lead;
    }
  }
  const text = bytes.subarray(0, end);
  if (text.includes(0)) throw new CairnError('input', `${what} holds binary data (a NUL byte), not text`);
  try {
    return UTF8.decode(text);
  } catch {
    throw new CairnError('input', `${what} is not valid UTF-8 text`);
  }
}
