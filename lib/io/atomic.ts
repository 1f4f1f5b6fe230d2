import { randomBytes } from '../core/crypto.js';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CairnError } from '../core/errors.js';
import { mkdirNoFollow } from './safe.js';

/**
 * Write a file whole inside `within`: a temp file beside it (created exclusively), then rename.
 * No directory on the way may be a symbolic link, and a link at the path itself is replaced, never
 * followed (SPEC §2).
 */
export function writeFileAtomic(path: string, text: string | Uint8Array, within: string): void {
  mkdirNoFollow(within, dirname(path));
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text, { flag: 'wx' });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new CairnError('store', `cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
