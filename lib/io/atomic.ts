import { randomBytes } from '../core/crypto.js';
import { closeSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CairnError } from '../core/errors.js';
import { mkdirNoFollow } from './safe.js';

/** Temp file, then rename; no link on the way followed, one at the path replaced (SPEC §2). */
export function writeFileAtomic(path: string, content: string | Uint8Array | ((fd: number) => void), within: string): void {
  mkdirNoFollow(within, dirname(path));
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx');
    try {
      if (typeof content === 'function') content(fd);
      else writeFileSync(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    if (err instanceof CairnError) throw err; // from what `write` read: said as it is
    throw new CairnError('store', `cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
