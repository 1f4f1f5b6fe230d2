import { writeSync } from 'node:fs';

// The product goes to fd 1 with a plain write: process.stdout would load node:net on every hook run.

/** A caller that closed its end (EPIPE) gets nothing, and no crash. */
export function writeStdout(text: string): void {
  let rest = Buffer.from(text);
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(1, rest));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      // non-blocking stdout full: the stream queues the rest and drains it before exit
      if (code === 'EAGAIN') return void process.stdout.write(rest);
      throw err;
    }
  }
}
